# SPDX-License-Identifier: GPL-2.0-or-later
"""Man pages: rtgate.1 is generated from the command's own parser and must be current; both pages render cleanly."""

from __future__ import annotations

import shutil
import subprocess
import sys

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
