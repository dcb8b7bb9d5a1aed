#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Find (or, with --fix, add) the SPDX licence line at the top of every source file of the project.

.venv/bin/python scripts/spdx.py          # list files without it; exit 1 if any
.venv/bin/python scripts/spdx.py --fix    # add it after a #! line or an encoding line
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TAG = "SPDX-License-Identifier: GPL-2.0-or-later"
# comment syntax by file kind; the line goes first, or right after a '#!' line
COMMENT = {".py": "# {}", ".sh": "# {}", ".c": "// {}", ".h": "// {}", ".build": "# {}", ".txt": "# {}"}
# data and third-party files carry no header: fixtures, golden outputs, schemas, the licence itself
SKIP_PARTS = {"fixtures", "golden", "schemas"}


def source_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    files = []
    for name in listed:
        path = ROOT / name
        if not path.is_file() or SKIP_PARTS & set(Path(name).parts):
            continue
        kind = path.suffix if path.suffix in COMMENT else None
        if name.endswith("meson.build"):
            kind = ".build"
        elif name.endswith("meson_options.txt") or "/cross/" in name:
            kind = ".txt"
        elif path.suffix == "" and path.read_bytes()[:2] == b"#!":
            kind = ".sh"
        elif path.suffix == ".txt":
            kind = None
        if kind is not None:
            files.append(path)
    return files


def has_tag(path: Path) -> bool:
    return any(TAG in line for line in path.read_text(errors="replace").splitlines()[:3])


def add_tag(path: Path) -> None:
    kind = ".build" if path.name == "meson.build" else ".txt" if path.suffix == ".txt" else path.suffix or ".sh"
    line = COMMENT.get(kind, "# {}").format(TAG)
    lines = path.read_text().splitlines(keepends=True)
    at = 1 if lines and lines[0].startswith("#!") else 0
    lines.insert(at, line + "\n")
    path.write_text("".join(lines))


def main() -> int:
    missing = [p for p in source_files() if not has_tag(p)]
    if "--fix" in sys.argv[1:]:
        for p in missing:
            add_tag(p)
        return 0
    for p in missing:
        print(p.relative_to(ROOT))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
