"""``lab`` (also ``python -m lab``): one command line, a subcommand per job; each lives in a module of its own.

Every subcommand parses its flags, calls the library (:mod:`lab.campaign`, :mod:`lab.evidence.verify.auditor`),
prints, and returns an exit code. Mistakes are one line on standard error and exit code 2, never a traceback: a
flag that does not belong to the subcommand is refused, never ignored. ``run.py`` and ``audit.py`` at the top of a
checkout are the same commands under their old spelling (:mod:`lab.cli.legacy`).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

import lab
from lab.cli import audit, chat, listing, replay, run
from lab.cli.common import Output, Parser, console
from lab.errors import LabError, UsageError
from lab.evidence.records.safefs import printable
from lab.evidence.records.signing import SigningError
from lab.evidence.write.writer import WriteError


def version_text(prog: str) -> str:
    """``lab 0.1.0 (CPython 3.11.7; from the checkout /src/lab)``: which lab, on which Python, from where, so a bug
    report says what ran."""
    root = Path(lab.__file__).resolve().parent.parent
    where = f"from the checkout {root}" if (root / "pyproject.toml").is_file() else f"installed in {root}"
    return f"{prog} {lab.__version__} ({platform.python_implementation()} {platform.python_version()}; {where})"


def parser(prog: str = "lab") -> argparse.ArgumentParser:
    """The whole command line's parser."""
    top = Parser(prog=prog, description="The concurrency lab: run, explore, replay and audit scenarios.")
    top.add_argument("--version", action="version", version=version_text(prog))
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    run.add(commands)
    replay.add(commands)
    listing.add(commands)
    audit.add(commands)
    commands.add_parser(
        "chat", help="chat on one session, offline or --live (lab chat --help)", add_help=False
    )  # its flags are the console's own: main() hands them over before parsing
    return top


def main(
    argv: Sequence[str] | None = None,
    *,
    console_out: Console | None = None,
    prog: str = "lab",
    root: Path | None = None,
    recorded: Sequence[str] | None = None,
) -> int:
    """Parse ``argv`` (default: the process's arguments), act, and return the exit code.

    ``console_out``: where results go (default: standard output at a terminal's width, or in a pipe ``COLUMNS``
    else 80). ``root``: the checkout whose ``lab/`` a run records (``run.py`` passes its own). ``recorded``: the
    command as ``run.json`` records it (default ``lab`` and ``argv``).
    """
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["chat"]:
        return chat.main(words[1:])
    output = Output(console_out or console(), prog)
    args = argparse.Namespace(created=None, json=False)
    try:
        whole = parser(prog)
        args, extra = whole.parse_known_args(words, namespace=args)
        if extra:  # a flag of another command, or none: refused, never ignored
            raise UsageError(_misplaced(whole, prog, args.command, extra))
        args.root = root
        # python -m lab records itself as lab: one name for one program, whichever way it was started
        args.recorded = list(recorded) if recorded is not None else ["lab" if prog == "python -m lab" else prog, *words]
        if args.command == "audit":
            sys.dont_write_bytecode = True  # an audit leaves no trace, not even __pycache__ beside the code it runs
        code: int = args.handler(args, output)
        sys.stdout.flush()  # here, where a failure to write is handled, not at the exit
        return code
    except SystemExit as done:  # --help and --version print and end here
        return done.code if isinstance(done.code, int) else 0
    except SigningError as error:
        output.fail(f"--sign: {error}; the evidence is written and verifiable, but not signed")
        return 1
    except WriteError as error:
        output.fail(f"{error}; the folder is left unfinished (no SHA256SUMS), and an audit says so")
        return 3
    except LabError as error:
        if args.json:
            print(json.dumps({"ok": False, "error": printable(str(error))}))
        output.fail(str(error))
        return 2
    except KeyboardInterrupt:
        output.fail(_interrupted(args))
        return 130
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as a command line tool does
        _discard_output()
        return 141
    except OSError as error:
        if error.errno not in _OUTPUT_ERRORS:
            raise
        _discard_output()  # what is still buffered would fail again at the exit, with a traceback
        with contextlib.suppress(OSError):
            output.fail(f"cannot write its output: {error.strerror}; the result was not shown")
        return 1
    except Exception as error:
        if not _wraps_interrupt(error):
            raise
        output.fail(_interrupted(args))  # Python wrapped the Ctrl-C (__set_name__ makes it a RuntimeError)
        return 130


def _wraps_interrupt(error: BaseException) -> bool:
    """Whether ``error`` was caused by a Ctrl-C: Python re-raises some exceptions as another (an exception in a
    class's ``__set_name__``, during an import, becomes a ``RuntimeError`` whose cause is the original)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


_OUTPUT_ERRORS = frozenset({errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EPIPE})
"""What writing the output can fail with (``> /dev/full``): one line and exit 1, never a traceback."""


def _discard_output() -> None:
    """From now on standard output goes nowhere, so the exit's flush of what is buffered cannot fail."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _misplaced(whole: argparse.ArgumentParser, prog: str, command: str, extra: Sequence[str]) -> str:
    """Why ``extra`` was refused: which commands take the first flag, when others do."""
    flag = extra[0].split("=")[0]
    commands = next(a for a in whole._actions if isinstance(a, argparse._SubParsersAction))
    owners = [
        name
        for name, sub in commands.choices.items()
        if flag in sub._option_string_actions and name != command  # argparse keeps no public index of flags
    ]
    if flag.startswith("--") and owners:
        return f"{flag} goes with {' or '.join(f'{prog} {name}' for name in owners)}, not {prog} {command}"
    return f"unrecognized arguments: {' '.join(extra)} ({prog} {command} --help lists its flags)"


def _interrupted(args: argparse.Namespace) -> str:
    if getattr(args, "command", None) == "audit":
        return "interrupted; nothing was written, and the folder was not judged"
    if args.created is not None:
        return f"interrupted; {args.created} is left unfinished (no SHA256SUMS), and an audit says so"
    return "interrupted; nothing was written"
