# SPDX-License-Identifier: GPL-2.0-or-later
"""What Fuego needs from rtgate, as files: the sampler's source for the build phase, rtgate as a
wheel for the host (Fuego's container), which compiles the threshold file, and for a board's own
threshold file that file (with those it extends) beside the test and a spec per measurement.

The host only compiles threshold files (`rtgate fuego args`), so the wheel is built without the
sampler (-Dsampler=false): pure Python, py3-none-any, for whatever Python 3.10+ and machine the
container has. The board's sampler is built from the tarball by the test's build phase.

Fuego builds a test's program from a tarball in the test's directory (fuego_test.sh's
`tarball=`; Fuego's `unpack` extracts it in the build directory and strips the top directory),
so the tarball holds `rtgate-sampler-<version>/` with the top meson files and `sampler/`: the
sampler builds alone from those (`-Dharness=disabled`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

from rtgate import __version__
from rtgate.core.thresholds import ThresholdFile
from rtgate.errors import RtgateError
from rtgate.fuego.criteria import TEST
from rtgate.fuego.names import distinct, fuego_name

TARBALL = "rtgate-sampler.tar.gz"  # the name fuego_test.sh's `tarball=` gives
# The board side: the sampler, and rtgate.sh (requirements, load, environment), which Benchmark.rtgate
# runs on the board as LAVA does.
SAMPLER_FILES = ("meson.build", "meson_options.txt", "sampler", "doc/rtgate-sampler.8", "lava-defs/rtgate.sh")


def find_source(start: Path) -> Path:
    """The rtgate source tree at or above `start` (its pyproject.toml names the project rtgate)."""
    for d in [start, *start.parents]:
        project = d / "pyproject.toml"
        if project.is_file() and re.search(r'(?m)^name\s*=\s*"rtgate"\s*$', project.read_text(errors="replace")):
            return d
    raise RtgateError(f"no rtgate source tree at or above {start}: run in a checkout or give --source")


def _skip(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    name = os.path.basename(info.name)
    if name in ("__pycache__", ".git") or (name.startswith("build") and info.isdir()):
        return None
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def write_tarball(source: Path, out: Path) -> Path:
    for item in SAMPLER_FILES:
        if not (source / item).exists():
            raise RtgateError(f"{source} has no {item}: not an rtgate source tree", path=str(source))
    path = out / TARBALL
    tmp = path.with_name(path.name + ".tmp")
    top = f"rtgate-sampler-{__version__}"
    with tarfile.open(tmp, "w:gz") as tar:
        for item in SAMPLER_FILES:
            tar.add(source / item, arcname=f"{top}/{item}", filter=_skip)
    tmp.replace(path)
    return path


def build_wheel(source: Path, out: Path) -> Path:
    """`pip wheel` of the source tree without the sampler: rtgate as pure Python (py3-none-any)."""
    before = set(out.glob("rtgate-*.whl"))
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out)]
    cmd += ["--config-settings=setup-args=-Dsampler=false", str(source)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise RtgateError(f"pip wheel failed for {source}: {last}")
    made = sorted(set(out.glob("rtgate-*.whl")) - before) or sorted(out.glob(f"rtgate-{__version__}-*.whl"))
    if not made:
        raise RtgateError(f"pip wheel wrote no rtgate wheel into {out}")
    return made[-1]


BOARD_DIR = "thresholds"  # in the test's directory; fuego_test.sh reads THRESHOLDS relative to $TEST_HOME
SPEC_FILE = "spec.json"
# What fuego_test.sh lets through into the board's command string (rtgate_check_word).
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_.+=,:/-]+")


def copy_board_file(tf: ThresholdFile, out: Path) -> list[str]:
    """The threshold file and every file it extends into <out>/thresholds/, as they lie relative to
    each other (extends: names a path relative to the file); returns their paths in the test, the
    file itself last."""
    files = [Path(f).resolve() for f in tf.files]
    root = Path(os.path.commonpath([str(f.parent) for f in files]))
    for f in files:
        dst = out / BOARD_DIR / f.relative_to(root)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dst)
    copied = [(Path(BOARD_DIR) / f.relative_to(root)).as_posix() for f in files]
    if not _PLAIN_WORD.fullmatch(copied[-1]):
        raise RtgateError(f"{tf.path}: Fuego's test accepts file names of letters, digits and _.+=,:/- only")
    return copied


def write_test_yaml(source: Path, out: Path, board: list[str]) -> Path:
    """The test's test.yaml with the board's files added to data_files: Fuego packages a test
    (ftc package-test) from the files data_files names, so one left out would not travel."""
    import yaml

    shipped = source / "fuego" / "tests" / TEST / "test.yaml"
    text = shipped.read_text(encoding="utf-8")
    if not text.rstrip().splitlines()[-1].startswith("    - "):
        raise RtgateError("test.yaml does not end with its data_files list", path=str(shipped))
    text = text.rstrip("\n") + "\n" + "".join(f"    - {f}\n" for f in board)
    listed = yaml.safe_load(text).get("data_files") or []
    if not set(board) <= set(listed):
        raise RtgateError("test.yaml's data_files could not be extended", path=str(shipped))
    path = out / "test.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def board_specs(tf: ThresholdFile, where: str) -> dict[str, Any]:
    """spec.json for a board's threshold file: one spec per measurement, named by its Fuego name, and
    `default` (Fuego's naming rules: every test has one) for the first measurement."""
    names = list(tf.measurements)
    distinct("measurements", str(tf.path), [(n, fuego_name(n)) for n in names])
    specs: dict[str, dict[str, str]] = {"default": {"THRESHOLDS": where, "MEASUREMENT": names[0]}}
    for n in names:
        if not _PLAIN_WORD.fullmatch(n):
            raise RtgateError(f"measurement {n!r} of {tf.path}: Fuego's test accepts letters, digits and _.+=,:/-")
        spec = fuego_name(n)
        if spec == "default" and n != names[0]:
            raise RtgateError(f"measurement {n!r} of {tf.path}: its spec would be Fuego's 'default' (the first one's)")
        specs[spec] = {"THRESHOLDS": where, "MEASUREMENT": n}
    return {"testName": TEST, "specs": specs}


def write_board(tf: ThresholdFile, out: Path, source: Path) -> list[Path]:
    """The board's threshold file beside the test, its spec.json and test.yaml (replacing the shipped ones)."""
    copied = copy_board_file(tf, out)
    spec = out / SPEC_FILE
    spec.write_text(json.dumps(board_specs(tf, copied[-1]), indent=4) + "\n")
    return [*(out / c for c in copied), spec, write_test_yaml(source, out, copied)]
