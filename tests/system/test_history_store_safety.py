# SPDX-License-Identifier: GPL-2.0-or-later
"""The SQLite history store under concurrency and damage: a new store opened by many writers at
the same instant never fails; a damaged store is refused, never written into."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rtgate.errors import RtgateError
from rtgate.history.backend import EarlyCheck, check_target
from rtgate.history.store import HistoryDB


def _open_and_write(target: str, barrier: Any) -> None:
    """One writer: wait for the others at the barrier, open (creating) the store, write a row."""
    barrier.wait()
    with HistoryDB(target) as db, db.db.transaction():
        db.db.execute("CREATE TABLE IF NOT EXISTS probe (v INTEGER)")
        db.db.execute("INSERT INTO probe VALUES (1)")


def test_eight_writers_opening_a_new_store_at_once(tmp_path: Path) -> None:
    """50 rounds of 8 processes opening one new store at the same instant: none fails, all land.
    Before the fix, PRAGMA journal_mode=WAL answered "database is locked" without waiting."""
    fork = multiprocessing.get_context("fork")  # processes, as separate writers are; started fast
    for round_ in range(50):
        target = str(tmp_path / f"h{round_}.db")
        barrier = fork.Barrier(8)
        procs = [fork.Process(target=_open_and_write, args=(target, barrier)) for _ in range(8)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
            assert p.exitcode == 0, f"round {round_}: a writer failed (exit {p.exitcode})"
        with HistoryDB(target) as db:
            assert db.db.execute("SELECT COUNT(*) FROM probe").fetchone()[0] == 8
            assert db.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _store(path: Path) -> None:
    with HistoryDB(path) as db, db.db.transaction():
        db.db.execute("CREATE TABLE filler (v TEXT)")
        for _ in range(200):
            db.db.execute("INSERT INTO filler VALUES (?)", ("x" * 2000,))
    # Fold the WAL into the file, as after the last writer closed.
    con = __import__("sqlite3").connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


@pytest.mark.parametrize("damage", ["truncate1", "page"])
def test_damaged_store_is_refused_and_left_alone(tmp_path: Path, damage: str) -> None:
    good = tmp_path / "good.db"
    _store(good)
    bad = tmp_path / "bad.db"
    shutil.copy(good, bad)
    if damage == "truncate1":
        os.truncate(bad, os.path.getsize(bad) - 1)
    else:  # overwrite the middle of a b-tree page
        with open(bad, "r+b") as f:
            f.seek(os.path.getsize(bad) - 4096 + 8)  # the last page: it holds rows
            f.write(b"\xa5" * 600)
    before = bad.read_bytes()
    with pytest.raises(RtgateError) as e:
        HistoryDB(bad)
    message = str(e.value)
    assert "damaged history database" in message and "\n" not in message
    with pytest.raises(RtgateError):
        check_target(str(bad))  # the pre-check before measuring says the same
    assert bad.read_bytes() == before  # never written into
    check_target(str(good))


def _damage(path: Path, how: str) -> None:
    if how == "truncate1":
        os.truncate(path, os.path.getsize(path) - 1)
    else:  # overwrite the middle of a b-tree page
        with open(path, "r+b") as f:
            f.seek(os.path.getsize(path) - 4096 + 8)  # the last page: it holds rows
            f.write(b"\xa5" * 600)


@pytest.mark.parametrize("damage", ["truncate1", "page"])
def test_damage_found_by_the_early_check_is_said_at_the_open(tmp_path: Path, damage: str) -> None:
    """compare begins the damage check before its imports (EarlyCheck): the open says the same."""
    bad = tmp_path / "bad.db"
    _store(bad)
    _damage(bad, damage)
    before = bad.read_bytes()
    with pytest.raises(RtgateError) as plain:
        HistoryDB(bad)
    early = EarlyCheck(str(bad))
    assert early.identity is not None
    with pytest.raises(RtgateError) as e:
        HistoryDB(bad, early)
    assert str(e.value) == str(plain.value) and "damaged history database" in str(e.value)
    assert bad.read_bytes() == before


@pytest.mark.parametrize("change", ["truncate1", "replaced"])
def test_a_store_changed_after_its_early_check_is_checked_again(tmp_path: Path, change: str) -> None:
    """The early answer counts only for the file it read: damaged (a size change) or replaced (a new
    inode) after a clean early check, the store is checked again at the open, and refused."""
    path = tmp_path / "h.db"
    _store(path)
    early = EarlyCheck(str(path))
    assert early.answered()  # clean, and the file is still the one checked
    if change == "truncate1":
        _damage(path, "truncate1")
    else:
        other = tmp_path / "other.db"
        _store(other)
        _damage(other, "page")
        os.replace(other, path)
    with pytest.raises(RtgateError, match="damaged history database"):
        HistoryDB(path, early)


def test_a_clean_early_check_is_not_repeated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What EarlyCheck saves: the open takes its answer and reads the file once, in the thread."""
    import threading

    from rtgate.history import backend

    path = tmp_path / "h.db"
    _store(path)
    callers = []
    real = backend._check_intact

    def counted(conn: Any, target: str) -> None:
        callers.append(threading.get_ident())
        real(conn, target)

    monkeypatch.setattr(backend, "_check_intact", counted)
    with HistoryDB(path, EarlyCheck(str(path))):
        pass
    assert len(callers) == 1 and callers[0] != threading.get_ident()
    with HistoryDB(path):
        pass
    assert callers[-1] == threading.get_ident()  # without it, the open checks


def test_no_early_check_of_what_is_not_a_regular_store(tmp_path: Path) -> None:
    """A new store, a FIFO or a directory: no thread, the open does what it always did."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (tmp_path / "new.db", fifo, tmp_path):
        early = EarlyCheck(str(target))
        assert early.identity is None and not early.answered()
    with HistoryDB(tmp_path / "new.db", EarlyCheck(str(tmp_path / "new.db"))) as db:
        assert db.dialect == "sqlite"


@pytest.mark.parametrize("command", ["trend", "compare"])
def test_damaged_store_through_the_cli(tmp_path: Path, command: str) -> None:
    bad = tmp_path / "bad.db"
    _store(bad)
    os.truncate(bad, os.path.getsize(bad) - 1)
    args = ["--base", "a", "--new", "b"] if command == "compare" else []
    r = subprocess.run(
        [Path(sys.executable).parent / "rtgate", "history", command, "--db", str(bad), "--platform", "p", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "damaged history database" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_check_target_refuses_what_is_not_a_store(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("not a database\n")
    with pytest.raises(RtgateError, match="not a SQLite history database"):
        check_target(str(junk))
    with pytest.raises(RtgateError):
        check_target(str(tmp_path))  # a directory
    check_target(str(tmp_path / "new.db"))  # absent in a writable folder: fine
    assert not (tmp_path / "new.db").exists()
