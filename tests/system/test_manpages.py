# SPDX-License-Identifier: GPL-2.0-or-later
"""Man pages: rtgate.1 is generated from the command's own parser and must be current; both pages render cleanly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def test_man_pages_are_current() -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "manpage.py"), "--check"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr


def test_every_sampler_option_is_in_its_man_page(sampler: str) -> None:
    import re

    help_text = subprocess.run([sampler, "--help"], capture_output=True, text=True, check=True).stdout
    page = (ROOT / "doc" / "rtgate-sampler.8").read_text().replace("\\-", "-")
    options = set(re.findall(r"(?<![\w-])--[a-z][a-z_-]+", help_text)) - {"--help"}
    assert len(options) > 40
    assert sorted(o for o in options if o not in page) == []


@pytest.mark.parametrize("page", ["rtgate.1", "rtgate-sampler.8", "rtgate-thresholds.5"])
def test_man_page_renders_without_warnings(page: str) -> None:
    groff = shutil.which("groff")
    if groff is None:
        pytest.skip("groff not installed (apt-get install groff-base)")
    r = subprocess.run(
        [groff, "-man", "-ww", "-z", "-Tutf8", str(ROOT / "doc" / page)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and not r.stderr, r.stderr


@pytest.mark.parametrize("page", ["rtgate", "rtgate-sampler", "rtgate-thresholds"])
def test_the_installed_pages_are_found_by_man(page: str) -> None:
    """pip install puts the pages under the environment (<venv>/man), where man-db looks for a <venv>/bin on
    PATH: README's `man rtgate` after the bootstrap (tests/system/test_tutorial.py runs it from a fresh copy)."""
    man = shutil.which("man")
    if man is None:
        pytest.skip("man not installed (apt-get install man-db)")
    env = {k: v for k, v in os.environ.items() if k != "MANPATH"}
    env["PATH"] = f"{sys.prefix}/bin:{env.get('PATH', '')}"
    r = subprocess.run([man, "-w", page], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0 and r.stdout.strip().startswith(f"{sys.prefix}/man/"), r.stdout + r.stderr
    shown = subprocess.run([man, "-P", "cat", page], capture_output=True, text=True, timeout=60, env=env).stdout
    assert (ROOT / "doc" / f"{Path(r.stdout.strip()).name}").exists() and shown.strip()
