# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate fuego args|criteria|package: Fuego's Benchmark.rtgate from the same threshold files."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rtgate.commands import add_command, add_thresholds
from rtgate.commands.common import add_compiled_args_command
from rtgate.core.thresholds import find_thresholds, load_thresholds
from rtgate.errors import RtgateError
from rtgate.fuego.criteria import TEST, fuego_files
from rtgate.fuego.names import check_plain_name
from rtgate.safe_io import write_text


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = add_command(sub, "fuego")
    fuego = p.add_subparsers(dest="fuego_command", metavar="ACTION")
    fuego.required = True
    add_compiled_args_command(fuego)
    c = fuego.add_parser("criteria", help="write criteria.json, reference.json and chart_config.json")
    add_thresholds(c)
    c.add_argument("--measurement", action="append", metavar="NAME", help="default: every measurement")
    c.add_argument("--cpus", type=int, metavar="N", help="the board's CPU count (for 'cpus: all')")
    c.add_argument("--board", metavar="NAME", help=f"write NAME-{TEST}-criteria.json for one board")
    c.add_argument("-o", "--output-dir", default=".", metavar="DIR")
    c.set_defaults(handler=handle_criteria)
    k = fuego.add_parser(
        "package", help="write the sampler's source tarball, an rtgate wheel and a board's files for Fuego"
    )
    k.add_argument("--source", metavar="DIR", help="the rtgate source tree (default: the checkout around .)")
    k.add_argument("--no-wheel", action="store_true", help="no wheel (a pure-Python py3-none-any one by default)")
    k.add_argument(
        "--thresholds",
        metavar="FILE",
        help="a board's threshold file: copied into DIR/thresholds/ (with the files it extends), a spec per "
        "measurement in DIR/spec.json, and its criteria, reference and chart files",
    )
    k.add_argument("--cpus", type=int, metavar="N", help="with --thresholds: the board's CPU count (for 'cpus: all')")
    k.add_argument("-o", "--output-dir", default=".", metavar="DIR")
    k.set_defaults(handler=handle_package)


def handle_criteria(args: argparse.Namespace) -> int:
    if args.board is not None:
        check_plain_name("board", args.board)
    tf = load_thresholds(find_thresholds(args.thresholds))
    names = args.measurement or list(tf.measurements)
    for n in names:
        if n not in tf.measurements:
            raise RtgateError(f"no measurement {n!r} in {tf.path}")
    files = fuego_files(tf, names, args.cpus)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, doc in files.items():
        if args.board and name == "criteria.json":
            name = f"{args.board}-{TEST}-criteria.json"
        elif args.board:
            continue  # a board file overrides the criteria only
        write_text(out / name, json.dumps(doc, indent=4) + "\n")
        print(f"wrote {out / name}")
    return 0


def handle_package(args: argparse.Namespace) -> int:
    from rtgate.fuego.package import build_wheel, find_source, write_board, write_tarball

    if args.cpus is not None and not args.thresholds:
        raise RtgateError("--cpus needs --thresholds")
    tf = load_thresholds(find_thresholds(args.thresholds)) if args.thresholds else None
    files = fuego_files(tf, list(tf.measurements), args.cpus) if tf else {}
    source = Path(args.source) if args.source else find_source(Path.cwd())
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    print(f"wrote {write_tarball(source, out)}")
    if tf is not None:
        for path in write_board(tf, out, source):
            print(f"wrote {path}")
        for name, doc in files.items():
            write_text(out / name, json.dumps(doc, indent=4) + "\n")
            print(f"wrote {out / name}")
    if not args.no_wheel:
        print(f"wrote {build_wheel(source, out)} (pure Python: pip install --no-deps it with Python 3.10 or newer)")
    return 0
