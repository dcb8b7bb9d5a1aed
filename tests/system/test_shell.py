# SPDX-License-Identifier: GPL-2.0-or-later
"""Every shell script we ship is shellcheck-clean."""

from __future__ import annotations

import subprocess

from conftest import ROOT


def test_shellcheck_clean(tool: object) -> None:
    shellcheck = tool("shellcheck", "shellcheck")  # type: ignore[operator]
    scripts = [ROOT / "scripts" / "bootstrap", ROOT / ".ci" / "run"]
    scripts += [p for p in ROOT.rglob("*.sh") if ".venv" not in p.parts and "build" not in p.parts[0]]
    r = subprocess.run([shellcheck, *map(str, scripts)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
