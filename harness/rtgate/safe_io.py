# SPDX-License-Identifier: GPL-2.0-or-later
"""Writing output files safely: rtgate may run as root in a shared directory.

Every file is written to a temporary file in the same directory, created exclusively with an
unpredictable name (O_CREAT | O_EXCL | O_NOFOLLOW, through tempfile.mkstemp), flushed to disk and
renamed over the target: a reader never sees half a file, a symlink planted under the temporary
name is never followed, and a crash leaves the old file or the new one. An existing target that is
not a regular file (a device such as /dev/full, a directory, a FIFO) is refused instead of being
replaced by a regular file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from rtgate.errors import RtgateError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_regular_or_absent(path: str | Path) -> None:
    """Refuse a path whose existing file is a device, directory or FIFO (for files opened in place)."""
    _check_target(Path(path))


def _check_target(path: Path) -> None:
    try:
        st = os.stat(path)  # follows a symlink: rename replaces the link itself, never its target
    except FileNotFoundError:
        return
    except OSError as e:
        raise RtgateError(f"cannot write: {e.strerror}", path=str(path)) from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a device, FIFO or socket"
        raise RtgateError(f"cannot write: it is {kind}, not a regular file, and is not replaced", path=str(path))


def check_output_file(path: str | Path) -> None:
    """Fail now, not after measuring: the directory must exist and be writable, the target regular."""
    p = Path(path)
    _check_target(p)
    directory = p.parent if str(p.parent) else Path(".")
    if not directory.is_dir():
        raise RtgateError(f"cannot write: directory {str(directory)!r} does not exist", path=str(p))
    _probe(directory, p)


def check_output_dir(path: str | Path) -> None:
    """Create the directory if needed and prove a file can be written in it."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise RtgateError("cannot write: exists and is not a directory", path=str(p)) from None
    except OSError as e:
        raise RtgateError(f"cannot create directory: {e.strerror}", path=str(p)) from None
    _probe(p, p)


def _probe(directory: Path, shown: Path) -> None:
    try:
        fd, name = tempfile.mkstemp(dir=directory, prefix=".rtgate-probe-")
    except OSError as e:
        raise RtgateError(f"cannot write: {e.strerror}", path=str(shown)) from None
    os.close(fd)
    os.unlink(name)


@contextmanager
def atomic_open(path: str | Path, binary: bool = False) -> Iterator[IO]:  # type: ignore[type-arg]
    """A file object whose content replaces `path` only when the block ends without an exception."""
    target = Path(path)
    _check_target(target)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{target.name[:64]}.", suffix=".tmp")
    except OSError as e:
        raise RtgateError(f"cannot write: {e.strerror}", path=str(target)) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # what open() would have made, not mkstemp's 0600
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the rename is done
    finally:
        os.close(fd)


def write_text(path: str | Path, text: str) -> None:
    try:
        with atomic_open(path) as f:
            f.write(text)
    except OSError as e:
        raise RtgateError(f"cannot write: {e.strerror}", path=str(path)) from None


def write_bytes(path: str | Path, data: bytes) -> None:
    try:
        with atomic_open(path, binary=True) as f:
            f.write(data)
    except OSError as e:
        raise RtgateError(f"cannot write: {e.strerror}", path=str(path)) from None
