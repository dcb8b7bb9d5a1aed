# SPDX-License-Identifier: GPL-2.0-or-later
"""What Fuego needs from rtgate, as files: the sampler's source for the build phase and rtgate
as a wheel for the host (Fuego's container), which compiles the threshold file.

Fuego builds a test's program from a tarball in the test's directory (fuego_test.sh's
`tarball=`; Fuego's `unpack` extracts it in the build directory and strips the top directory),
so the tarball holds `rtgate-sampler-<version>/` with the top meson files and `sampler/`: the
sampler builds alone from those (`-Dharness=disabled`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

from rtgate import __version__
from rtgate.errors import RtgateError

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
    """`pip wheel` of the source tree: rtgate with its sampler, for Fuego's container."""
    before = set(out.glob("rtgate-*.whl"))
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise RtgateError(f"pip wheel failed for {source}: {last}")
    made = sorted(set(out.glob("rtgate-*.whl")) - before) or sorted(out.glob(f"rtgate-{__version__}-*.whl"))
    if not made:
        raise RtgateError(f"pip wheel wrote no rtgate wheel into {out}")
    return made[-1]
