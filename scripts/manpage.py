#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write doc/rtgate.1 from the rtgate command's own argument parser, so the man page cannot drift from --help.

    .venv/bin/python scripts/manpage.py            # rewrite doc/rtgate.1
    .venv/bin/python scripts/manpage.py --check    # exit 1 when doc/rtgate.1 is out of date (the suite runs this)

The prose sections (description, exit status, files, environment) live in doc/rtgate.1.in; the COMMANDS section
is generated: every subcommand with its usage, help and every option.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "doc" / "rtgate.1.in"
OUTPUT = ROOT / "doc" / "rtgate.1"


def roff(text: str) -> str:
    """Escape text for roff: backslashes, and a leading dot or quote that would start a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in text.splitlines())


def subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser, str]]:
    found: list[tuple[str, argparse.ArgumentParser, str]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((name, sub, helps.get(name, "")))
                found += [(f"{name} {n}", p, h) for n, p, h in subcommands(sub)]
    return found


def options(parser: argparse.ArgumentParser) -> list[str]:
    lines: list[str] = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            metavar = "" if action.nargs == 0 else " " + (action.metavar or action.dest.upper())
            names = ", ".join(f"\\fB{roff(o)}\\fR{roff(str(metavar))}" for o in action.option_strings)
        else:
            names = f"\\fI{roff(str(action.metavar or action.dest))}\\fR"
        lines += [".TP", names, roff(action.help or "")]
    return lines


def generate() -> str:
    sys.path.insert(0, str(ROOT / "harness"))
    from rtgate.cli import build_parser

    parser = build_parser()
    out = [".SH COMMANDS"]
    for name, sub, helptext in subcommands(parser):
        usage = " ".join(sub.format_usage().split())
        usage = usage.removeprefix("usage: ")
        has_children = any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)
        out += [".SS " + roff(f"rtgate {name}"), roff(helptext.rstrip(".") + "." if helptext else ""),
                ".PP", ".nf", roff(usage), ".fi"]
        if not has_children:
            out += options(sub)
    return TEMPLATE.read_text().replace("@COMMANDS@\n", "\n".join(out) + "\n")


def main() -> int:
    text = generate()
    if "--check" in sys.argv[1:]:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            print(f"{OUTPUT.relative_to(ROOT)} is out of date: run scripts/manpage.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
