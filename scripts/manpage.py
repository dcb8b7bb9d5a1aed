#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the man pages from the programs' own option tables, so they cannot drift from --help.

    .venv/bin/python scripts/manpage.py            # rewrite doc/rtgate.1 and doc/rtgate-sampler.8
    .venv/bin/python scripts/manpage.py --check    # exit 1 when either is out of date (the suite runs this)

The prose lives in doc/*.in. rtgate.1's COMMANDS section comes from the argparse tree (every subcommand with its
usage, help and options); rtgate-sampler.8's OPTIONS section from ``rtgate-sampler --help``, which the sampler
prints from its one option table.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "doc" / "rtgate.1.in"
OUTPUT = ROOT / "doc" / "rtgate.1"
SAMPLER_TEMPLATE = ROOT / "doc" / "rtgate-sampler.8.in"
SAMPLER_OUTPUT = ROOT / "doc" / "rtgate-sampler.8"
HELP_LINE = re.compile(r"^(-\S(?: \S+)?)?\s+(--\S+)\s+(.*)$")


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
        out += [
            ".SS " + roff(f"rtgate {name}"),
            roff(helptext.rstrip(".") + "." if helptext else ""),
            ".PP",
            ".nf",
            roff(usage),
            ".fi",
        ]
        if not has_children:
            out += options(sub)
    return TEMPLATE.read_text().replace("@COMMANDS@\n", "\n".join(out) + "\n")


def generate_sampler() -> str:
    from rtgate.measure.runner import find_sampler

    text = subprocess.run([find_sampler(), "--help"], capture_output=True, text=True, check=True).stdout
    out = [".SH OPTIONS"]
    for line in text.splitlines():
        if line.strip() == "rtgate extensions:":
            out += [".SS rtgate extensions", "Options cyclictest does not have."]
            continue
        m = HELP_LINE.match(line)
        if m and m.group(2) != "--help":
            short, long_, what = m.groups()
            names = ", ".join(f"\\fB{roff(n)}\\fR" for n in (short, long_) if n)
            out += [".TP", names, roff(what)]
    return SAMPLER_TEMPLATE.read_text().replace("@OPTIONS@\n", "\n".join(out) + "\n")


def main() -> int:
    pages = {OUTPUT: generate(), SAMPLER_OUTPUT: generate_sampler()}
    if "--check" in sys.argv[1:]:
        stale = [p for p, text in pages.items() if not p.exists() or p.read_text() != text]
        for p in stale:
            print(f"{p.relative_to(ROOT)} is out of date: run scripts/manpage.py", file=sys.stderr)
        return 1 if stale else 0
    for p, text in pages.items():
        p.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
