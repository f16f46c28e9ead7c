# size: one console whole: its options, both sessions' askers, its commands and its loop
"""``python -m lab chat``: ask questions on one session, offline on the scripted double or live over HTTP.

The console is a thin command: it parses arguments, reads the environment (the library never does), builds a
session and a transport, and prints one line per question: the answer when it was committed, otherwise the status
in brackets and what it means for the history (``[TIMEOUT] nothing was committed``). It never re-asks on its own:
after a failure or a STALE answer the user decides whether to ask again.

Offline (the default) it needs no network and no key: :mod:`lab.transport.offline` echoes each question, and a
question ``!timeout``, ``!http_429``, ``!http_status``, ``!io``, ``!parse``, ``!empty`` or ``!length`` plays that
outcome, so every row of the reply table can be tried by hand. The start lines list these commands.

What reaches the terminal is text only: answers, questions and errors print with control characters shown as escapes,
and a typed line holding one (an arrow key on a terminal without line editing) is refused with one line. Line editing
and an in-memory history come from :mod:`readline` where Python has it (see :mod:`lab.terminal`).

``--store sqlite:PATH`` (or a ``postgresql://`` URL) keeps a versioned session's conversation in a database, so it
is still there after a restart, and several consoles on one database share it (a STALE answer says another one
committed first). The start line says which store holds the conversation.

``--stream`` shows each reply while it arrives and commits it only once the stream ended (a cut, oversized, stalled
or ``length`` stream commits nothing); Ctrl-C while a reply is on its way stops that request, commits nothing, and
the console goes on. ``--deadline SECONDS`` bounds each whole request. A request that timed out or was stopped has
an UNKNOWN outcome (the service may have finished and billed it); in a versioned session ``/reconcile`` asks the
service's record about each (``--lookup-path``, when the service has one) and commits what it finished through the
ordinary commit. ``/history`` prints the conversation the session keeps. Everything printed is wrapped at the
terminal's width (``COLUMNS``, else the terminal's, else 80), between words, never inside one.
"""

from __future__ import annotations

import argparse
import itertools
import os
import secrets
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NoReturn, Protocol, TextIO

from lab.errors import LabError, UsageError
from lab.messages import DEFAULT_MODEL, Message, Role
from lab.sessions.stores import StoreError, open_store
from lab.sessions.transactional import AskResult, AskStatus, TransactionalChat
from lab.sessions.versioned import CommitStatus, Ticket, VersionedSession
from lab.terminal import Wrapper, line_reader, refusal, say, terminal_width, visible
from lab.transport.contract import (
    UNKNOWN_FATE,
    FailureKind,
    OnDelta,
    Reconcilable,
    Reply,
    StreamingTransport,
    Transport,
    TransportFailure,
)
from lab.transport.http import HttpTransport
from lab.transport.offline import OFFLINE_COMMANDS, OfflineTransport

API_KEY_VARIABLE = "AGNES_API_KEY"
BASE_URL_VARIABLE = "AGNES_BASE_URL"


class Asker(Protocol):
    """Takes one question (and, streaming, where each piece of the reply goes as it arrives); returns the line the
    console prints after it: the answer, a status line, or ``""`` when a streamed answer was already shown whole."""

    def __call__(self, question: str, on_delta: OnDelta | None = None, /) -> str: ...


@dataclass
class Chat:
    """One console's session: how it asks, what it keeps, and the requests whose outcome is unknown."""

    ask: Asker
    history: Callable[[], tuple[Message, ...]]
    streaming: bool = False
    reconcile: Callable[[], list[str]] | None = None
    pending: dict[str, Ticket] = field(default_factory=dict)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run ``lab chat`` with the options in ``argv``; returns the exit code (0 done, 1 lab error, 2 usage error,
    130 interrupted).

    ``argv`` holds the options after ``chat`` (the process's own arguments by default); a leading ``chat`` is
    skipped, so both ``main(["--live"])`` and ``main(["chat", "--live"])`` work. The streams and the environment are
    parameters so tests can drive the console without a subprocess; by default they are the process's own.
    """
    source = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    env = environ if environ is not None else os.environ
    options = list(sys.argv[1:] if argv is None else argv)
    if options[:1] == ["chat"]:
        del options[0]
    try:
        args = _parser().parse_args(options)
        chat, banner = _build(args, env)
    except UsageError as error:
        print(visible(f"error: {error}"), file=err)
        return 2
    except SystemExit as leaving:  # --help printed its text and asked to leave
        return leaving.code if isinstance(leaving.code, int) else 0
    # The start lines are written for 80 columns (a store path or URL is never cut): a narrower terminal gets them
    # wrapped between words, a continuation indented.
    width = terminal_width(out, env)
    for line in banner.splitlines():
        if width < 80:
            say(out, line, width, indent=2)
        else:
            print(visible(line), file=out)
    print(file=out, flush=True)
    try:
        with line_reader(source, out) as read:
            return _loop(chat, read, out, lambda: terminal_width(out, env), tty=source.isatty())
    except KeyboardInterrupt:
        print(file=out, flush=True)
        return 130
    except UnicodeDecodeError:
        print(f"error: the input is not valid {getattr(source, 'encoding', None) or 'UTF-8'} text", file=err)
        return 1
    except LabError as error:
        print(visible(f"error: {error}"), file=err)
        return 1


def transactional_asker(chat: TransactionalChat) -> Asker:
    """Ask on a :class:`TransactionalChat`: the whole call, network included, runs under the session's lock.

    A Ctrl-C while the request is on its way stops it (CANCELLED): the session's candidate goes with the call."""

    def ask(question: str, on_delta: OnDelta | None = None, /) -> str:
        shown = _Shown(on_delta)
        try:
            result = chat.ask(question, on_delta=shown)
        except KeyboardInterrupt:
            return _failure_line("CANCELLED", FailureKind.CANCELLED)
        if result.committed and shown.any:
            return ""
        return _render_ask(result)

    return ask


class _Shown:
    """Passes pieces on to the console, and remembers whether any was shown (then a committed answer is not
    printed a second time)."""

    def __init__(self, on_delta: OnDelta | None) -> None:
        self._on_delta = on_delta
        self.any = False

    def __call__(self, piece: str) -> None:
        if self._on_delta is not None:
            self.any = True
            self._on_delta(piece)


def versioned_asker(
    session: VersionedSession,
    transport: Transport,
    *,
    model: str = DEFAULT_MODEL,
    request_ids: Iterator[str] | None = None,
    stream: bool = False,
    pending: dict[str, Ticket] | None = None,
) -> Asker:
    """Ask on a :class:`VersionedSession`: begin, send outside the lock, commit; never re-request on STALE.

    Request ids are ``r1``, ``r2``, ... in the order questions are sent, or the next of ``request_ids``; a blank
    question is refused before ``begin`` and takes no id. ``stream=True`` streams the reply (the request id travels
    as its idempotency key). A request that timed out or was stopped is put in ``pending`` (its outcome is unknown)
    for :func:`reconciler`.
    """
    ids = request_ids if request_ids is not None else (f"r{n}" for n in itertools.count(1))
    unknown = pending if pending is not None else {}
    if stream and not isinstance(transport, StreamingTransport):
        raise UsageError(f"--stream needs a transport that can stream; {type(transport).__name__} cannot")

    def send(ticket: Ticket, shown: _Shown) -> Reply:
        if stream and isinstance(transport, StreamingTransport):
            request = ticket.to_request(model=model, stream=True)
            return transport.stream(request, on_delta=shown, request_id=ticket.request_id)
        return transport.send(ticket.to_request(model=model))

    def ask(question: str, on_delta: OnDelta | None = None, /) -> str:
        if not question.strip():
            return "[EMPTY_QUESTION] the question is blank; nothing was sent"
        try:
            ticket = session.begin(next(ids), question)
        except StoreError as error:  # the database failed: say so in one line and keep the console running
            return f"[STORE] {error}"
        shown = _Shown(on_delta)
        try:
            reply = send(ticket, shown)
        except TransportFailure as failure:
            if failure.kind in UNKNOWN_FATE:
                unknown[ticket.request_id] = ticket
            return _failure_line(str(failure), failure.kind, unknown=_reconcilable(transport))
        except KeyboardInterrupt:
            unknown[ticket.request_id] = ticket
            return _failure_line("CANCELLED", FailureKind.CANCELLED, unknown=_reconcilable(transport))
        try:
            status = session.commit(ticket, reply.content, reply.finish_reason)
        except StoreError as error:
            return f"[STORE] {error}"
        if status is CommitStatus.COMMITTED:
            return "" if shown.any else reply.content or ""
        if status is CommitStatus.STALE:
            return "[STALE] the session was updated meanwhile; this answer was not added (ask again to retry)"
        if status is CommitStatus.INVALID:
            return (
                f"[INVALID] the reply was empty or incomplete (finish_reason={reply.finish_reason!r});"
                " nothing was committed"
            )
        return f"[{status}] nothing was committed"

    return ask


def reconciler(session: VersionedSession, transport: Transport, pending: dict[str, Ticket]) -> Callable[[], list[str]]:
    """``/reconcile``: ask the service's record about each request whose outcome is unknown, oldest first, and put
    what it finished through the ordinary commit. A lookup is not a new request: nothing is generated or billed."""

    def reconcile() -> list[str]:
        if not pending:
            return ["[RECONCILE] no request has an unknown outcome"]
        if not isinstance(transport, Reconcilable) or not transport.can_reconcile:
            return [
                f"[UNKNOWN] {', '.join(pending)}: this service keeps no record the console can ask"
                " (live: --lookup-path), so their outcome stays unknown"
            ]
        lines: list[str] = []
        for request_id, ticket in list(pending.items()):
            try:
                status = session.reconcile(ticket, transport)
            except StoreError as error:
                return [*lines, f"[STORE] {error}"]
            if status is not CommitStatus.UNKNOWN:
                del pending[request_id]
            lines.append(f"[{status}] {request_id}: {_RECONCILED.get(status, 'nothing was committed')}")
        return lines

    return reconcile


_RECONCILED = {
    CommitStatus.COMMITTED: "the service had finished it; its answer is now in the history (/history)",
    CommitStatus.STALE: "the service had finished it, but the session moved on; the answer was not added",
    CommitStatus.DUPLICATE: "its answer had already been committed",
    CommitStatus.INVALID: "the service's answer was empty or incomplete; nothing was committed",
    CommitStatus.UNKNOWN: "the service has no finished answer for it; its outcome is still unknown",
}


def _reconcilable(transport: Transport) -> bool:
    return isinstance(transport, Reconcilable) and transport.can_reconcile


class _ArgumentParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line, raised instead of printed with the usage block."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see --help)")


def _parser() -> argparse.ArgumentParser:
    chat = _ArgumentParser(
        prog="lab chat", description="Chat on one session: offline on the scripted double, or live with --live."
    )
    chat.add_argument(
        "--session",
        choices=("transactional", "versioned"),
        default=None,
        help="transactional: one question at a time under a lock (default in memory); versioned: begin, send, "
        "commit (the default with a durable --store)",
    )
    chat.add_argument(
        "--store",
        default="memory",
        metavar="STORE",
        help="where a versioned session keeps the conversation: memory (default, gone on restart), sqlite:PATH, "
        "or postgresql://USER@HOST:PORT/DB (both kept across restarts)",
    )
    chat.add_argument("--live", action="store_true", help=f"call the real service (needs {API_KEY_VARIABLE})")
    chat.add_argument(
        "--base-url", help=f"live only: the service's base URL, e.g. https://host/v1 (default: ${BASE_URL_VARIABLE})"
    )
    chat.add_argument("--model", default=DEFAULT_MODEL, help=f"the model each request names (default: {DEFAULT_MODEL})")
    chat.add_argument(
        "--deadline",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="live only: give up on one request after this many seconds in total: connect, headers and every "
        "chunk (default: no deadline)",
    )
    chat.add_argument(
        "--stream",
        action="store_true",
        help="show each reply as it arrives; it is committed only once the stream ends (Ctrl-C stops it)",
    )
    chat.add_argument(
        "--lookup-path",
        metavar="PATH",
        help="live only: the service's record of requests by id, below the base URL (e.g. /requests), which "
        "/reconcile asks after a timeout or a stop",
    )
    return chat


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text!r}")
    return value


def _build(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[Chat, str]:
    """The chat and the start lines; every problem found here is the user's, raised as :class:`UsageError`."""
    transport: Transport
    if args.live:
        transport = _live_transport(args, env)
        where = f"Live chat with {args.model} at {transport.url}"
    else:
        if args.base_url is not None or args.deadline is not None or args.lookup_path is not None:
            raise UsageError("--base-url, --deadline and --lookup-path only apply with --live")
        transport = OfflineTransport()
        where = "Offline chat (scripted answers, no network)"
    durable = args.store != "memory"
    session_kind = args.session or ("versioned" if durable else "transactional")
    if durable and session_kind != "versioned":
        raise UsageError("--store keeps a versioned session; use it with --session versioned (or leave --session out)")
    modes = _mode_lines(args)
    if session_kind == "transactional":
        chat = TransactionalChat(transport, model=args.model, stream=args.stream)
        banner = _banner(f"{where}, transactional session.", _MEMORY_NOTE, *modes, offline=not args.live, args=args)
        return Chat(transactional_asker(chat), chat.snapshot, streaming=args.stream), banner
    try:
        store = open_store(args.store)
        session = VersionedSession("console", store=store)
        version, history = session.snapshot()
    except StoreError as error:
        raise UsageError(str(error)) from None
    ids = None
    if store is None:
        banner = _banner(f"{where}, versioned session.", _MEMORY_NOTE, *modes, offline=not args.live, args=args)
    else:
        # Request ids must not repeat across restarts: a receipt of an earlier run would call a new question a
        # conflict.
        run = secrets.token_hex(4)
        ids = (f"{run}-r{n}" for n in itertools.count(1))
        banner = _banner(
            f"{where}, versioned session in {session.store_name} (version {version}, {len(history) // 2} pairs kept).",
            "The conversation is kept there across restarts.",
            *modes,
            offline=not args.live,
            args=args,
        )
    pending: dict[str, Ticket] = {}
    ask = versioned_asker(session, transport, model=args.model, request_ids=ids, stream=args.stream, pending=pending)

    def kept() -> tuple[Message, ...]:
        return session.snapshot()[1]  # read at each /history, never cached: a durable store may have moved on

    return Chat(ask, kept, args.stream, reconciler(session, transport, pending), pending), banner


_MEMORY_NOTE = "Memory is in-process only: the conversation is gone on restart."


def _mode_lines(args: argparse.Namespace) -> list[str]:
    """What the start lines say of streaming and the deadline."""
    lines = []
    if args.stream:
        lines.append("Replies stream as they arrive, committed only once they end; Ctrl-C stops one.")
    if args.deadline is not None:
        lines.append(f"Each request has {args.deadline:g} s in all: connect, headers and every chunk.")
    return lines


def _banner(where: str, memory: str, *modes: str, offline: bool, args: argparse.Namespace) -> str:
    """The start lines: where the chat runs, how long it remembers, streaming and the deadline, the offline
    commands, the console's commands, then a blank line.

    Each line fits 80 columns except for what cannot be cut (a long URL or store path), which is never cut.
    """
    lines = [where, memory, *modes]
    if offline:
        commands = " ".join((*OFFLINE_COMMANDS, "!cut") if args.stream else OFFLINE_COMMANDS)
        lines += [
            f"Offline commands: {commands}",
            "  each plays that outcome instead of an answer; any other line is echoed back.",
        ]
    if args.session == "versioned" or args.store != "memory":
        lines.append("/history shows the conversation kept; /reconcile asks about unknown outcomes.")
    else:
        lines.append("/history shows the conversation kept.")
    lines.append("Type exit (or end the input) to leave.")
    return "\n".join(lines) + "\n"


def _live_transport(args: argparse.Namespace, env: Mapping[str, str]) -> HttpTransport:
    if not env.get(API_KEY_VARIABLE, "").strip():  # the key first: it is the step a new user most often misses
        raise UsageError(f"--live needs an API key in the environment variable {API_KEY_VARIABLE}")
    base_url = args.base_url or env.get(BASE_URL_VARIABLE, "")
    if not base_url:
        raise UsageError(f"--live needs a base URL: pass --base-url or set {BASE_URL_VARIABLE}")
    # Surrounding whitespace (a newline left by `export KEY=$(cat file)`) is never part of a key.
    key = env[API_KEY_VARIABLE].strip()
    return HttpTransport(base_url, key, deadline=args.deadline, lookup_path=args.lookup_path)


def _loop(chat: Chat, read: Callable[[], str], out: TextIO, width: Callable[[], int], *, tty: bool) -> int:
    while True:
        line = read()
        if not line:
            if tty:  # Ctrl-D at the prompt: end its line, so the shell's prompt starts on a line of its own
                print(file=out, flush=True)
            return 0
        if line.strip() == "exit":
            return 0
        question = line.rstrip("\r\n")
        refused = refusal(question)
        if refused is not None:
            say(out, refused, width())
            continue
        command = _COMMANDS.get(question.strip())
        if command is not None:
            for said in command(chat):
                say(out, said, width(), indent=2)
            continue
        wrapper = Wrapper(out, width())
        said = chat.ask(question, _shown_through(wrapper) if chat.streaming else None)
        wrapper.end()
        if said:
            say(out, said, width())


def _shown_through(wrapper: Wrapper) -> OnDelta:
    """Each streamed piece, made visible, into the wrapper (which holds a word back until it is whole)."""

    def show(piece: str) -> None:
        wrapper.feed(visible(piece))

    return show


def _history(chat: Chat) -> list[str]:
    try:
        history = chat.history()
    except StoreError as error:
        return [f"[STORE] {error}"]
    if not history:
        return ["(the history is empty: nothing has been committed)"]
    pairs = len(history) // 2
    lines = [f"History: {pairs} {'pair' if pairs == 1 else 'pairs'} kept, oldest first"]
    for message in history:
        lines.append(f"{'you' if message.role is Role.USER else 'model'}: {message.content}")
    return lines


def _reconcile(chat: Chat) -> list[str]:
    if chat.reconcile is None:
        return [
            "[RECONCILE] only a versioned session can reconcile (--session versioned): a transactional"
            " request leaves nothing to commit later"
        ]
    return chat.reconcile()


_COMMANDS: dict[str, Callable[[Chat], list[str]]] = {"/history": _history, "/reconcile": _reconcile}


def _render_ask(result: AskResult) -> str:
    if result.committed:
        return result.answer or ""
    if result.status in (AskStatus.EMPTY_QUESTION, AskStatus.QUESTION_TOO_LARGE):
        return f"[{result.status}] {result.detail}; nothing was sent"
    if result.status in (AskStatus.EMPTY, AskStatus.INCOMPLETE):
        return f"[{result.status}] {result.detail}; nothing was committed"
    return _failure_line(result.detail, FailureKind(result.status.value))


def _failure_line(label: str, kind: FailureKind, *, unknown: bool | None = None) -> str:
    """The line for a transport failure; a timeout or a stop says what it does not prove.

    ``unknown`` (versioned sessions): whether ``/reconcile`` can ask the service about it later."""
    line = f"[{label}] nothing was committed"
    if kind in UNKNOWN_FATE:
        line += "; the service may have processed and billed it"
        if unknown is True:
            line += " (its outcome is unknown: /reconcile asks the service)"
        elif unknown is False:
            line += " (its outcome is unknown: this service keeps no record to ask)"
    return line
