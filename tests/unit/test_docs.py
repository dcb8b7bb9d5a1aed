# SPDX-License-Identifier: GPL-2.0-or-later
"""The documentation: a README read in ten minutes whose tutorial works, reference pages it links that exist, and
reStructuredText that renders without a warning (as a forge shows it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT
from rtgate.core.thresholds import load_thresholds

README = ROOT / "README.rst"
PAGES = sorted((ROOT / "doc").glob("*.rst")) + [README, ROOT / "CONTRIBUTING.rst", ROOT / "CHANGELOG.rst"]
LINK = re.compile(r"`[^`<]*<([^>`]+)>`_")


def test_the_readme_reads_in_ten_minutes() -> None:
    assert len(README.read_text().splitlines()) <= 200


def test_the_quick_start_commands_are_the_ones_ci_runs() -> None:
    text = README.read_text()
    assert "    sh scripts/bootstrap && .venv/bin/rtgate run --junit rtgate-junit.xml\n" in text
    ci = (ROOT / ".ci" / "run").read_text().splitlines()[-1]
    assert ci == "sh scripts/bootstrap --test && .venv/bin/python -m pytest -n 2"
    assert f"    {ci}\n" in text


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_exists(page: Path) -> None:
    for target in LINK.findall(page.read_text()):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target.split("#")[0]).exists(), f"{page.name} links to {target}, which does not exist"


def test_the_readme_links_every_reference_page() -> None:
    linked = {Path(t).name for t in LINK.findall(README.read_text())}
    pages = {p.name for p in (ROOT / "doc").glob("*.rst")}
    assert sorted(pages - linked) == []


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_renders_without_a_warning(page: Path) -> None:
    docutils_core = pytest.importorskip("docutils.core")
    messages: list[str] = []
    docutils_core.publish_doctree(
        page.read_text(),
        source_path=str(page),
        settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": _Collect(messages)},
    )
    assert messages == []


class _Collect:
    def __init__(self, out: list[str]) -> None:
        self.out = out

    def write(self, text: str) -> None:
        if text.strip():
            self.out.append(text)


def test_the_tutorial_files_are_valid(tmp_path: Path) -> None:
    """The board file and its local variant, exactly as the README shows them, load; the variant
    removes the inherited requirements and keeps both loads of the board file."""
    blocks = re.findall(r"\.\. code-block:: yaml\n\n((?:    .*\n|\n)+)", README.read_text())
    board, laptop = (re.sub(r"^    ", "", b, flags=re.M) for b in blocks[:2])
    (tmp_path / "my-board.yaml").write_text(board)
    (tmp_path / "my-laptop.yaml").write_text(laptop)
    tf = load_thresholds(tmp_path / "my-board.yaml")
    assert set(tf.measurements) == {"idle", "loaded"}
    assert tf.measurements["idle"].require == {"preempt_rt": True, "architecture": "aarch64"}
    assert [ld.kind for ld in tf.measurements["loaded"].loads] == ["cpu", "memory"]
    local = load_thresholds(tmp_path / "my-laptop.yaml")
    assert local.measurements["idle"].require == {}
    assert [g.limit_us for g in local.measurements["idle"].gates] == [2000.0, 50.0]
    assert [ld.kind for ld in local.measurements["loaded"].loads] == ["cpu", "memory"]


def _readme_exit_statuses() -> dict[int, str]:
    section = README.read_text().split("\nExit status\n===========\n", 1)[1].strip().split("\n\n", 1)[0]
    rows: dict[int, str] = {}
    code = None
    for line in section.splitlines():
        if line.startswith("="):
            continue
        head = line[:7].strip()
        if head:
            code = int(head)
            rows[code] = ""
        assert code is not None
        rows[code] += " " + line[7:].strip()
    return {c: " ".join(text.replace("``", "").split()) for c, text in rows.items()}


def test_every_exit_status_is_documented_alike_in_help_man_page_and_readme() -> None:
    """One table (rtgate.cli.EXIT_STATUSES) holds every exit status; --help prints it, the man page is
    generated from it (test_manpages checks it is current), and README's table says the same words."""
    from rtgate.cli import EXIT_STATUSES, build_parser

    declared = dict(EXIT_STATUSES)
    assert _readme_exit_statuses() == declared
    help_text = " ".join(build_parser().format_help().split())
    for code, text in declared.items():
        assert f" {code} {text}" in help_text
    page = (ROOT / "doc" / "rtgate.1").read_text().replace("\\-", "-")
    assert all(f".B {code}\n{text}\n" in page for code, text in declared.items())


def test_every_exit_constant_is_a_documented_status() -> None:
    """An exit status a command returns by name (EXIT_... = N) is in the table."""
    from rtgate.cli import EXIT_STATUSES

    used = {
        int(n)
        for path in (ROOT / "harness" / "rtgate").rglob("*.py")
        for n in re.findall(r"^\s*EXIT_[A-Z_]+ = (\d+)", path.read_text(), flags=re.M)
    }
    assert used and used <= {code for code, _ in EXIT_STATUSES}
