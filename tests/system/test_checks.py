# SPDX-License-Identifier: GPL-2.0-or-later
"""The project's own checks, run by the suite so CI enforces them: ruff (lint and format) and mypy as configured in
pyproject.toml, codespell, shellcheck on every shell script, cppcheck on the sampler, and the SPDX licence line on
every source file."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

BIN = Path(sys.executable).parent


def _tool(name: str, package: str) -> str:
    path = shutil.which(name, path=f"{BIN}:{shutil.os.environ.get('PATH', '')}")  # type: ignore[attr-defined]
    if path is None:
        pytest.fail(f"{name} is missing: scripts/bootstrap --test installs {package}")
    return path


def _run(argv: list[str]) -> None:
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]


def test_ruff_check() -> None:
    _run([_tool("ruff", "ruff (the test extra)"), "check", "--no-cache", "."])


def test_ruff_format() -> None:
    _run([_tool("ruff", "ruff (the test extra)"), "format", "--check", "--no-cache", "."])


def test_mypy() -> None:
    # The source tree, not the installed copy: pyproject.toml's files = harness/rtgate.
    _run([_tool("mypy", "mypy (the test extra)"), "--no-incremental", "--cache-dir=/dev/null"])


# Our words that look like misspellings: "hist" (histogram files), "limt" (a deliberate typo in a test), ...
CODESPELL_IGNORE = "tre,nd,ser,hist,fo,crate,limt,breal"
CODESPELL_SKIP = (
    "*.json,*.hist,*.stdout,*.svg,COPYING,./tests/golden,./tests/fixtures,*/tests/golden/*,*/tests/fixtures/*"
)


def test_codespell() -> None:
    # Explicit paths and options: Debian's codespell reads no pyproject.toml and would walk .git and .venv.
    _run(
        [
            _tool("codespell", "codespell"),
            f"--skip={CODESPELL_SKIP}",
            "-L",
            CODESPELL_IGNORE,
            "harness",
            "sampler",
            "scripts",
            "lava-defs",
            "fuego",
            "benchmarks",
            "tests",
            "doc",
            "README.rst",
            "CONTRIBUTING.rst",
            "CHANGELOG.rst",
        ]
    )


def test_shellcheck_every_shell_script() -> None:
    scripts = [
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*")
        if p.is_file()
        and ".git" not in p.parts
        and not any(part.startswith((".venv", "build")) for part in p.relative_to(ROOT).parts)
        and (
            p.suffix == ".sh"
            or (
                p.suffix == ""
                and p.read_bytes()[:20].startswith((b"#!/bin/sh", b"#!/usr/bin/env bash", b"#!/bin/bash"))
            )
        )
    ]
    assert "lava-defs/rtgate.sh" in scripts and "scripts/bootstrap" in scripts
    _run([_tool("shellcheck", "shellcheck"), *sorted(scripts)])


def test_cppcheck_the_sampler() -> None:
    _run(
        [
            _tool("cppcheck", "cppcheck"),
            "--error-exitcode=1",
            "--quiet",
            "--std=c11",
            "--enable=warning,portability",
            "--inline-suppr",
            "-D_GNU_SOURCE",
            "--suppress=missingIncludeSystem",
            "sampler",
        ]
    )


def test_spdx_line_on_every_source_file() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "spdx.py")], capture_output=True, text=True)
    assert r.returncode == 0, "no SPDX line in:\n" + r.stdout


# Commits before this one predate the commit-msg hook; from here on every message follows CONTRIBUTING.rst.
COMMIT_MSG_BASELINE = "edfcfb6"


def test_commit_messages_since_the_hook() -> None:
    known = subprocess.run(
        ["git", "cat-file", "-e", f"{COMMIT_MSG_BASELINE}^{{commit}}"], cwd=ROOT, capture_output=True
    )
    if known.returncode != 0:
        pytest.skip(f"history before {COMMIT_MSG_BASELINE} is not in this clone (shallow?)")
    _run([sys.executable, str(ROOT / "scripts" / "commit_msg.py"), "--since", COMMIT_MSG_BASELINE])
