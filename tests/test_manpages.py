"""Man pages: rtgate.1 is generated from the command's own parser and must be current; both pages render cleanly."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_rtgate_1_is_current() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "manpage.py"), "--check"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("page", ["rtgate.1"])
def test_man_page_renders_without_warnings(page: str) -> None:
    groff = shutil.which("groff")
    if groff is None:
        pytest.skip("groff not installed (apt-get install groff-base)")
    r = subprocess.run([groff, "-man", "-ww", "-z", "-Tutf8", str(ROOT / "doc" / page)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
