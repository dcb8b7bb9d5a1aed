# SPDX-License-Identifier: GPL-2.0-or-later
"""Every file rtgate writes, and every file it reads back from an output folder, goes through here:
rtgate may run as root in a folder others can write to.

A folder is held open by descriptor and every name in it is opened relative to that descriptor with
O_NOFOLLOW, so a symbolic link planted under a name rtgate uses, or a sub-folder replaced by a link,
is refused, never followed. A file is either replaced atomically (written to a temporary file created
exclusively under an unpredictable name, flushed to disk, renamed over the target, the folder synced:
a reader never sees half a file and a crash leaves the old file or the new one) or, for the streams a
child process writes while it runs, created afresh with O_EXCL after the old one is removed. An
existing target that is not a regular file (a device such as /dev/full, a directory, a FIFO) is
refused instead of being replaced by a regular file.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from rtgate.errors import RtgateError

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
MAX_SCAN_ENTRIES = 100_000  # entries looked at for planted links in an output folder


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _error(what: str, e: OSError, path: Path | str) -> RtgateError:
    if e.errno == errno.ELOOP:
        return RtgateError(f"{what}: it is a symbolic link, which rtgate never follows here", path=str(path))
    return RtgateError(f"{what}: {e.strerror}", path=str(path))


class Folder:
    """A folder held open by descriptor; the names in it are opened relative to it, never through a link.

    `Folder(path)` follows `path` itself as the caller named it (the user's own choice of folder);
    `sub(name)` never follows a link."""

    def __init__(self, path: str | Path, create: bool = False, _fd: int | None = None) -> None:
        self.path = Path(path)
        if _fd is not None:
            self.fd = _fd
            return
        if create:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except FileExistsError:
                raise RtgateError("cannot write: exists and is not a directory", path=str(self.path)) from None
            except OSError as e:
                raise _error("cannot create directory", e, self.path) from None
        try:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            raise _error("cannot open directory", e, self.path) from None

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def sub(self, name: str, create: bool = True) -> Folder:
        """The sub-folder `name` (made if absent); a link in its place is refused."""
        if create:
            try:
                os.mkdir(name, 0o777, dir_fd=self.fd)
            except FileExistsError:
                pass
            except OSError as e:
                raise _error("cannot create directory", e, self.path / name) from None
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=self.fd)
        except OSError as e:
            if e.errno == errno.ENOTDIR and self.is_link(name):
                e = OSError(errno.ELOOP, os.strerror(errno.ELOOP))
            raise _error("cannot open directory", e, self.path / name) from None
        return Folder(self.path / name, _fd=fd)

    def _lstat(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def is_link(self, name: str) -> bool:
        st = self._lstat(name)
        return st is not None and stat.S_ISLNK(st.st_mode)

    def exists(self, name: str) -> bool:
        return self._lstat(name) is not None

    def _check_target(self, name: str) -> None:
        try:
            st = self._lstat(name)
        except OSError as e:
            raise _error("cannot write", e, self.path / name) from None
        if st is not None and stat.S_ISLNK(st.st_mode):
            # the link itself is replaced, never written through; what it points to is only looked at
            # so that a link to /dev/full is refused as /dev/full is
            try:
                st = os.stat(name, dir_fd=self.fd)
            except OSError:
                st = None
        if st is None:
            return
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a device, FIFO or socket"
            raise RtgateError(
                f"cannot write: it is {kind}, not a regular file, and is not replaced", path=str(self.path / name)
            )

    def unlink(self, name: str) -> None:
        """Remove a regular file (or a link, which is never followed); absent is fine. Whatever else
        is there (a FIFO, socket, device or folder) is refused as create() and atomic() refuse it."""
        self._check_target(name)
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise _error("cannot remove", e, self.path / name) from None

    def create(self, name: str) -> IO[bytes]:
        """A new, empty file `name` for a stream (a child's output): the old file is removed first and
        the new one created exclusively, so nothing planted under the name is written through."""
        self._check_target(name)
        self.unlink(name)
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=self.fd)
        except OSError as e:
            raise _error("cannot write", e, self.path / name) from None
        return os.fdopen(fd, "wb")

    @contextmanager
    def atomic(self, name: str, binary: bool = False, sync: bool = True) -> Iterator[IO]:  # type: ignore[type-arg]
        """A file object whose content replaces `name` only when the block ends without an exception.

        sync=False leaves the folder's sync (the rename made durable) to the caller's next replace in
        it: one sync of the folder covers every rename before it (each fsync costs up to ~10 ms on a
        busy disk)."""
        self._check_target(name)
        tmp = ""
        fd = -1
        for _ in range(100):
            tmp = f".{name[:64]}.{os.urandom(6).hex()}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=self.fd)
                break
            except FileExistsError:
                continue
            except OSError as e:
                raise _error("cannot write", e, self.path / name) from None
        if fd < 0:
            raise RtgateError("cannot write: no free temporary name", path=str(self.path / name))
        try:
            os.fchmod(fd, 0o666 & ~_umask())  # what open() would have made
            raw = os.fdopen(fd, "wb")
            f: IO = raw if binary else io.TextIOWrapper(raw, encoding="utf-8", newline="")  # type: ignore[type-arg]
            with f:
                yield f
                f.flush()
                os.fsync(raw.fileno())
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=self.fd)
            except OSError:
                pass
            raise
        if sync:
            self.sync()

    def replace(self, name: str, data: str | bytes, sync: bool = True) -> None:
        """Write `data` as `name`, atomically; an OSError is an RtgateError naming the file. sync: as atomic()'s."""
        try:
            with self.atomic(name, binary=isinstance(data, bytes), sync=sync) as f:
                f.write(data)
        except OSError as e:
            raise _error("cannot write", e, self.path / name) from None

    def sync(self) -> None:
        try:
            os.fsync(self.fd)
        except OSError:
            pass  # some file systems cannot sync a directory; the rename is done

    def read_bytes(self, name: str, limit: int | None = None) -> bytes:
        """A regular file's bytes (at most `limit`), never read through a link."""
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK, dir_fd=self.fd)
        except OSError as e:
            raise _error("cannot read", e, self.path / name) from None
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise RtgateError("cannot read: not a regular file", path=str(self.path / name))
            return f.read() if limit is None else f.read(limit)

    def read_text(self, name: str, limit: int | None = None) -> str:
        return self.read_bytes(name, limit).decode("utf-8", errors="replace")


def check_regular_or_absent(path: str | Path) -> None:
    """Refuse a path whose existing file is a device, directory or FIFO (for files opened in place)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return
    except OSError as e:
        raise _error("cannot write", e, p) from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a device, FIFO or socket"
        raise RtgateError(f"cannot write: it is {kind}, not a regular file, and is not replaced", path=str(p))


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return kind
    return "a device"


def open_input(path: str | Path, error: type[RtgateError] = RtgateError, what: str = "input") -> IO[bytes]:
    """A regular file opened for reading once, by the name the user gave. A FIFO, socket or device is
    refused before anything is read from it: opened non-blocking (a FIFO without a writer would block
    the open itself), looked at through the descriptor, closed. Nothing else bounds how long a pipe
    or /dev/zero takes, and a later open of the same name could meet another file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        why = e.strerror
        if e.errno == errno.ENXIO and _is_socket(path):  # a socket cannot be opened at all
            why = f"it is a socket; rtgate reads {what} only from a regular file"
        raise error(f"cannot read: {why}", path=str(path)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise error(
                f"cannot read: it is {_kind(mode)}; rtgate reads {what} only from a regular file", path=str(path)
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    # Outside the try: from fdopen on the file object owns fd, and closes it itself when fdopen fails
    # (a Ctrl-C inside it); a second close could close a descriptor opened since under the same number.
    return os.fdopen(fd, "rb")


def _is_socket(path: str | Path) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def read_input(path: str | Path, limit: int, error: type[RtgateError] = RtgateError, what: str = "input") -> bytes:
    """A regular file's bytes, refused when it holds more than `limit` (never read past limit + 1)."""
    with open_input(path, error, what) as f:
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise error(f"cannot read: {e.strerror}", path=str(path)) from None
    if len(data) > limit:
        raise error(f"larger than {_size(limit)}: more than rtgate reads as {what}", path=str(path))
    return data


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and not n % (1 << 20) else f"{n} bytes"


def _split(path: str | Path) -> tuple[Path, str]:
    p = Path(path)
    return (p.parent if str(p.parent) else Path(".")), p.name


def check_output_file(path: str | Path) -> None:
    """Fail now, not after measuring: the directory must exist and be writable, the target a regular
    file or absent (not a link: it would be replaced by a file, not written through)."""
    directory, name = _split(path)
    if not directory.is_dir():
        raise RtgateError(f"cannot write: directory {str(directory)!r} does not exist", path=str(path))
    with Folder(directory) as d:
        if not name:
            raise RtgateError("cannot write: not a file name", path=str(path))
        d._check_target(name)
        _probe(d, Path(path))


def check_output_dir(path: str | Path, names: Iterable[str] = ()) -> None:
    """Create the directory if needed, prove a file can be written in it, and refuse a link planted
    anywhere in it (at its top or one folder down: where rtgate writes). `names`: the files (and, ending
    with "/", the folders) rtgate will write there."""
    with Folder(path, create=True) as d:
        _probe(d, Path(path))
        link = planted_link(d)
        if link:
            raise RtgateError(
                "a symbolic link in the output folder: rtgate never writes through one (remove it)", path=link
            )
        for name in names:
            if name.endswith("/"):  # a folder rtgate writes in: absent or a folder (a link is refused above)
                st = d._lstat(name[:-1])
                if st is not None and not stat.S_ISDIR(st.st_mode):
                    raise RtgateError("cannot write in it: not a directory", path=str(d.path / name[:-1]))
                if st is not None:
                    with d.sub(name[:-1], create=False) as s:
                        _check_entries(s)
            else:
                d._check_target(name)


def _check_entries(d: Folder) -> None:
    """A folder rtgate writes files in whose names the caller does not list (a load's log and figures):
    anything but a regular file in it (a FIFO, socket, device or folder) is refused as one at a listed
    name is, before anything runs."""
    with os.scandir(d.fd) as entries:
        for seen, entry in enumerate(entries):
            if seen >= MAX_SCAN_ENTRIES:
                return
            if not entry.is_file(follow_symlinks=False):
                d._check_target(entry.name)


def planted_link(d: Folder) -> str | None:
    """The first symbolic link in the folder or its sub-folders (never entered through a link)."""
    seen = 0
    with os.scandir(d.fd) as top:
        for entry in top:
            seen += 1
            if seen > MAX_SCAN_ENTRIES:
                return None
            if entry.is_symlink():
                return str(d.path / entry.name)
            if entry.is_dir(follow_symlinks=False):
                with d.sub(entry.name, create=False) as s, os.scandir(s.fd) as inner:
                    for e in inner:
                        seen += 1
                        if e.is_symlink():
                            return str(s.path / e.name)
    return None


def _probe(d: Folder, shown: Path) -> None:
    try:
        with d.atomic(f".rtgate-probe-{os.getpid()}", binary=True):
            raise _Probed
    except _Probed:
        pass
    except OSError as e:
        raise _error("cannot write", e, shown) from None


class _Probed(Exception):
    """Ends a probe write without replacing anything."""


@contextmanager
def atomic_open(path: str | Path, binary: bool = False) -> Iterator[IO]:  # type: ignore[type-arg]
    """A file object whose content replaces `path` only when the block ends without an exception."""
    directory, name = _split(path)
    with Folder(directory) as d, d.atomic(name, binary) as f:
        yield f


def write_text(path: str | Path, text: str) -> None:
    directory, name = _split(path)
    with Folder(directory) as d:
        d.replace(name, text)


def write_bytes(path: str | Path, data: bytes) -> None:
    directory, name = _split(path)
    with Folder(directory) as d:
        d.replace(name, data)
