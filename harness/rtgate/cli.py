# SPDX-License-Identifier: GPL-2.0-or-later
"""The rtgate command: one module per subcommand under rtgate.commands."""

from __future__ import annotations

# Only what main() needs before its guard: a Ctrl-C while a command is imported is then caught
# there like any other, never a traceback (rtgate.console guards the instants before).
import argparse
import importlib
import os
import sys

from rtgate import __version__
from rtgate.commands import COMMANDS
from rtgate.errors import RtgateError

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs 3 ms at every start: for the checkers only
    from collections.abc import Callable
    from typing import Any, ClassVar, NoReturn

EXIT_USAGE = 2  # usage or input error: no verdict
EXIT_INTERNAL = 2  # a bug in rtgate: no verdict either, never 0 (pass) or 1 (a gate failed)
EXIT_INTERRUPTED = 130  # Ctrl-C outside a measurement (a measurement reports what it measured)
# Every exit status any command uses, said once: `rtgate --help` prints it, scripts/manpage.py writes
# rtgate.1's EXIT STATUS from it, and tests/unit/test_docs.py holds README's table to it.
EXIT_STATUSES = (
    (0, "every gate passed (or was INCONCLUSIVE, with --allow-inconclusive); history bisect: GOOD"),
    (
        1,
        "a gate failed, or could not be evaluated (ERROR); doctor: a require: is not met; "
        "history compare: a regression; history bisect: BAD",
    ),
    (
        2,
        "usage or input error (one line naming the file, line or option); an output that could not be written; "
        "also a bug in rtgate itself (rtgate: internal error ...; RTGATE_DEBUG=1 prints the traceback)",
    ),
    (
        3,
        "a gate was INCONCLUSIVE (--allow-inconclusive makes that 0); history compare: not enough data; "
        "history bisect: MORE (measure the commit again)",
    ),
    (4, "history compare: NOT COMPARABLE (the machines or the environments differ, or drifted), so no verdict"),
    (125, "history bisect: undecided at --max-runs (git bisect run's skip)"),
    (130, "Ctrl-C outside a measurement (a measurement cut short by a signal reports what it measured)"),
)


class _Parser(argparse.ArgumentParser):
    """One line for any usage error, naming the option and the command whose --help lists them.

    argparse reports a missing argument before an unknown option (`rtgate check --bogus t.yaml`
    would blame the results), and unknown options under the top-level usage: both are put right."""

    argv: ClassVar[tuple[str, ...]] = ()  # the words main() parses
    command_parsers: dict[str, argparse.ArgumentParser]

    def add_subparsers(self, **kwargs: Any) -> Any:
        action = super().add_subparsers(**kwargs)
        self.command_parsers = action.choices
        return action

    def error(self, message: str) -> NoReturn:
        unknown = self.unknown_options(self.words())
        if unknown and message.startswith("the following arguments are required"):
            message = f"unrecognized arguments: {' '.join(unknown)}"
        self.exit(EXIT_USAGE, f"rtgate: error: {message} (see {self.prog} --help)\n")

    def words(self) -> list[str]:
        """The words of argv that are this (sub)command's own."""
        names = self.prog.split()[1:]
        words = list(self.argv)
        for name in names:
            words = words[words.index(name) + 1 :] if name in words else words
        return words

    def unknown_options(self, words: list[str]) -> list[str]:
        known = [o for a in self._actions for o in a.option_strings]
        unknown = []
        for word in words:
            if word == "--":
                break
            name = word.split("=", 1)[0]
            if not name.startswith("-") or name == "-" or name.lstrip("-").replace(".", "").isdigit():
                continue
            # argparse takes a prefix of a long option, and a short one with its value attached
            if name.startswith("--"):
                if not any(o.startswith(name) for o in known):
                    unknown.append(word)
            elif name[:2] not in known:
                unknown.append(word)
        return unknown

    def deepest(self, argv: list[str]) -> _Parser:
        """The parser of the (sub)command argv names."""
        parser: _Parser = self
        for word in argv:
            sub = getattr(parser, "command_parsers", {}).get(word)
            if isinstance(sub, _Parser):
                parser = sub
        return parser


def _chosen(argv: list[str]) -> str | None:
    """The command named on the command line: the first word that is not an option.

    The top-level options (-h, --version) take no value, so that word is the command.
    """
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(argv: list[str] | None = None) -> _Parser:
    """The parser; with `argv`, only the command it names is built in full (and imported).

    Every other command gets a bare entry, so `rtgate --help` still lists them all and a
    misspelt one is still refused by name; without `argv` (the man page), all are built.
    """
    parser = _Parser(
        prog="rtgate",
        description="Real-time latency gates for kernel CI.",
        epilog=_exit_statuses(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rtgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    chosen = _chosen(argv) if argv is not None else None
    for name, helptext in COMMANDS.items():
        if argv is None or name == chosen:
            importlib.import_module(f"rtgate.commands.{name}").register(sub)
        else:
            sub.add_parser(name, help=helptext)
    return parser


def _exit_statuses() -> str:
    """EXIT_STATUSES for --help, wrapped here: textwrap would be one more import at every start."""
    rows = []
    for code, text in EXIT_STATUSES:
        line = f"  {code:<5}"
        for word in text.split():
            if len(line) + 1 + len(word) > 79 and line.strip():
                rows.append(line)
                line = " " * 7
            line += word if line.endswith(" ") else " " + word
        rows.append(line)
    return "exit status:\n" + "\n".join(rows)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: list[str] | None = None, started: Callable[[], None] | None = None, whole_process: bool = False) -> int:
    """Run the command argv names; `started` is called once it is imported and its options parsed.
    whole_process: the command is this process's (the console script), which ends when it returns."""
    if argv is None:
        argv = sys.argv[1:]
    try:
        _Parser.argv = tuple(argv)
        parser = build_parser(argv)
        args, extra = parser.parse_known_args(argv)
        if extra:  # named under the command that refused them, not under `rtgate`
            parser.deepest(argv).error(f"unrecognized arguments: {' '.join(extra)}")
        if started is not None:
            started()
        args.whole_process = whole_process
        return int(args.handler(args))
    except RtgateError as e:
        if _interrupted(e):  # an error a Ctrl-C caused (a read it cut short) is the Ctrl-C
            print("rtgate: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        print(f"rtgate: error: {_one_line(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("rtgate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        if _interrupted(e):  # a Ctrl-C inside, e.g., a class's __set_name__ comes out as a RuntimeError
            print("rtgate: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        import traceback  # only here: a bug (and its imports) costs nothing on the way in

        if os.environ.get("RTGATE_DEBUG"):
            traceback.print_exc()
        where = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
        at = f" at {os.path.basename(where.filename)}:{where.lineno}" if where else ""
        print(
            f"rtgate: internal error (please report it, with RTGATE_DEBUG=1 for the traceback): "
            f"{type(e).__name__}{at}: {_one_line(str(e))[:300]}",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _interrupted(e: BaseException) -> bool:
    """Whether a Ctrl-C is what `e` was raised for (a KeyboardInterrupt among its causes)."""
    seen: set[int] = set()
    cause: BaseException | None = e
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


if __name__ == "__main__":
    sys.exit(main())
