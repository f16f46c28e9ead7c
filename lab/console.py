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
"""

from __future__ import annotations

import argparse
import itertools
import os
import secrets
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NoReturn, TextIO

from lab.errors import LabError, UsageError
from lab.messages import DEFAULT_MODEL
from lab.sessions.stores import StoreError, open_store
from lab.sessions.transactional import AskResult, AskStatus, TransactionalChat
from lab.sessions.versioned import CommitStatus, VersionedSession
from lab.terminal import line_reader, refusal, visible
from lab.transport.contract import FailureKind, Transport, TransportFailure
from lab.transport.http import HttpTransport
from lab.transport.offline import OFFLINE_COMMANDS, OfflineTransport

API_KEY_VARIABLE = "AGNES_API_KEY"
BASE_URL_VARIABLE = "AGNES_BASE_URL"

Asker = Callable[[str], str]
"""Takes one question, returns the one line (or answer) the console prints for it."""


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
        asker, banner = _build(args, env)
    except UsageError as error:
        print(visible(f"error: {error}"), file=err)
        return 2
    except SystemExit as leaving:  # --help printed its text and asked to leave
        return leaving.code if isinstance(leaving.code, int) else 0
    print(visible(banner), file=out, flush=True)
    try:
        with line_reader(source, out) as read:
            return _loop(asker, read, out)
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
    """Ask on a :class:`TransactionalChat`: the whole call, network included, runs under the session's lock."""

    def ask(question: str) -> str:
        return _render_ask(chat.ask(question))

    return ask


def versioned_asker(
    session: VersionedSession,
    transport: Transport,
    *,
    model: str = DEFAULT_MODEL,
    request_ids: Iterator[str] | None = None,
) -> Asker:
    """Ask on a :class:`VersionedSession`: begin, send outside the lock, commit; never re-request on STALE.

    Request ids are ``r1``, ``r2``, ... in the order questions are sent, or the next of ``request_ids``; a blank
    question is refused before ``begin`` and takes no id.
    """
    ids = request_ids if request_ids is not None else (f"r{n}" for n in itertools.count(1))

    def ask(question: str) -> str:
        if not question.strip():
            return "[EMPTY_QUESTION] the question is blank; nothing was sent"
        try:
            ticket = session.begin(next(ids), question)
        except StoreError as error:  # the database failed: say so in one line and keep the console running
            return f"[STORE] {error}"
        try:
            reply = transport.send(ticket.to_request(model=model))
        except TransportFailure as failure:
            return _failure_line(str(failure), failure.kind)
        try:
            status = session.commit(ticket, reply.content, reply.finish_reason)
        except StoreError as error:
            return f"[STORE] {error}"
        if status is CommitStatus.COMMITTED:
            return reply.content or ""
        if status is CommitStatus.STALE:
            return "[STALE] the session was updated meanwhile; this answer was not added (ask again to retry)"
        if status is CommitStatus.INVALID:
            return (
                f"[INVALID] the reply was empty or incomplete (finish_reason={reply.finish_reason!r});"
                " nothing was committed"
            )
        return f"[{status}] nothing was committed"

    return ask


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
        help="live only: give up on one request after this many seconds in total (default: no deadline)",
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


def _build(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[Asker, str]:
    """The asker and the start lines; every problem found here is the user's, raised as :class:`UsageError`."""
    transport: Transport
    if args.live:
        transport = _live_transport(args, env)
        where = f"Live chat with {args.model} at {transport.url}"
    else:
        if args.base_url is not None or args.deadline is not None:
            raise UsageError("--base-url and --deadline only apply with --live")
        transport = OfflineTransport()
        where = "Offline chat (scripted answers, no network)"
    durable = args.store != "memory"
    session_kind = args.session or ("versioned" if durable else "transactional")
    if durable and session_kind != "versioned":
        raise UsageError("--store keeps a versioned session; use it with --session versioned (or leave --session out)")
    if session_kind == "transactional":
        asker = transactional_asker(TransactionalChat(transport, model=args.model))
        return asker, _banner(f"{where}, transactional session.", _MEMORY_NOTE, offline=not args.live)
    try:
        store = open_store(args.store)
        session = VersionedSession("console", store=store)
        version, history = session.snapshot()
    except StoreError as error:
        raise UsageError(str(error)) from None
    if store is None:
        banner = _banner(f"{where}, versioned session.", _MEMORY_NOTE, offline=not args.live)
        return versioned_asker(session, transport, model=args.model), banner
    # Request ids must not repeat across restarts: a receipt of an earlier run would call a new question a conflict.
    run = secrets.token_hex(4)
    ids = (f"{run}-r{n}" for n in itertools.count(1))
    banner = _banner(
        f"{where}, versioned session in {session.store_name} (version {version}, {len(history) // 2} pairs kept).",
        "The conversation is kept there across restarts.",
        offline=not args.live,
    )
    return versioned_asker(session, transport, model=args.model, request_ids=ids), banner


_MEMORY_NOTE = "Memory is in-process only: the conversation is gone on restart."


def _banner(where: str, memory: str, *, offline: bool) -> str:
    """The start lines: where the chat runs, how long it remembers, the offline commands, then a blank line.

    Each line fits 80 columns except for what cannot be cut (a long URL or store path), which is never cut.
    """
    lines = [where, memory]
    if offline:
        lines += [
            f"Offline commands: {' '.join(OFFLINE_COMMANDS)}",
            "  each plays that outcome instead of an answer; any other line is echoed back.",
        ]
    lines.append("Type exit (or end the input) to leave.")
    return "\n".join(lines) + "\n"


def _live_transport(args: argparse.Namespace, env: Mapping[str, str]) -> HttpTransport:
    if not env.get(API_KEY_VARIABLE, "").strip():  # the key first: it is the step a new user most often misses
        raise UsageError(f"--live needs an API key in the environment variable {API_KEY_VARIABLE}")
    base_url = args.base_url or env.get(BASE_URL_VARIABLE, "")
    if not base_url:
        raise UsageError(f"--live needs a base URL: pass --base-url or set {BASE_URL_VARIABLE}")
    # Surrounding whitespace (a newline left by `export KEY=$(cat file)`) is never part of a key.
    return HttpTransport(base_url, env[API_KEY_VARIABLE].strip(), deadline=args.deadline)


def _loop(ask: Asker, read: Callable[[], str], out: TextIO) -> int:
    while True:
        line = read()
        if not line or line.strip() == "exit":
            return 0
        question = line.rstrip("\r\n")
        print(refusal(question) or visible(ask(question)), file=out, flush=True)


def _render_ask(result: AskResult) -> str:
    if result.committed:
        return result.answer or ""
    if result.status in (AskStatus.EMPTY_QUESTION, AskStatus.QUESTION_TOO_LARGE):
        return f"[{result.status}] {result.detail}; nothing was sent"
    if result.status in (AskStatus.EMPTY, AskStatus.INCOMPLETE):
        return f"[{result.status}] {result.detail}; nothing was committed"
    return _failure_line(result.detail, FailureKind(result.status.value))


def _failure_line(label: str, kind: FailureKind) -> str:
    """The line for a transport failure; a timeout says what it does not prove."""
    line = f"[{label}] nothing was committed"
    if kind is FailureKind.TIMEOUT:
        line += " (the service may still have received, processed and billed the request)"
    return line
