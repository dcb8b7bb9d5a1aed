# SPDX-License-Identifier: GPL-2.0-or-later
"""A LAVA server's REST API (api/v0.2), just what `rtgate lab` needs: submit, follow, cancel, read
results and logs. Where the server and token come from: lavacli's own identities file, or the
environment (RTGATE_LAVA_URL, RTGATE_LAVA_TOKEN).

The server is not trusted with more than its answers (issue 47). The token goes only to the scheme,
host and port the user named: a redirect elsewhere is an error naming both, never followed (a
redirect on the same server is). Every socket read and write waits at most until the request's
deadline (the command's --timeout, or the few seconds left to cancel after a stop, else REQUEST_S
for one request), so a server that trickles a byte every few seconds cannot hold rtgate past it.
Every body is read with a bound on its size; a job's log beyond MAX_LOG_BYTES is cut with a note.
A garbage answer to a read is retried a few times with back-off, then is an error saying what came."""

from __future__ import annotations

import http.client
import io
import json
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtgate.core.yamlload import LAVA_RESULTS, load_yaml
from rtgate.errors import RtgateError
from rtgate.safe_io import read_input

MAX_CONFIG_BYTES = 1 << 20
# Job ids per list query: the URL stays under 1 KiB, well inside any web server's request-line limit
# (gunicorn's is 4094 bytes).
MAX_IDS_PER_QUERY = 100
READ_S = 60.0  # the longest wait for one read or write on the server's socket
REQUEST_S = 120.0  # the longest one request may take in all, when no deadline of the command is nearer
# Bodies: a job list of 100 jobs with their definitions is about 1 MB; a board's results export holds a
# few hundred cases of ~300 bytes; a job's log is its console (boot and test, a few MB).
MAX_JSON_BYTES = 16 << 20
MAX_RESULTS_BYTES = 16 << 20
MAX_LOG_BYTES = 64 << 20  # read of a job's log; beyond it the log is cut, with a note
MAX_LOG_LINE = 2 << 20  # lava-server writes a log line of at most 10^6 characters (lava_common.log.dump)
MAX_ERROR_BYTES = 500  # of an error page, shown in the message
GET_ATTEMPTS = 3  # a read answered with garbage, a 5xx or a broken connection: tried again twice
RETRY_S = 1.0  # the first pause before trying again; doubled each time


class LavaApiError(RtgateError):
    """The server refused a request, could not be reached, or answered something rtgate cannot use."""

    retry = True  # worth asking again (a garbage answer, a 5xx, a broken connection)


class LavaRedirectError(LavaApiError):
    """The server sent a request to another scheme, host or port: never followed with the token."""

    retry = False


class LavaTimeout(LavaApiError):
    """No (whole) answer before the request's deadline."""

    retry = False


class _OutOfTime(TimeoutError):
    pass


class _Clock:
    """The deadline every socket operation of one request keeps to."""

    def __init__(self, until: float) -> None:
        self.until = until

    def left(self) -> float:
        left = self.until - time.monotonic()
        if left <= 0:
            raise _OutOfTime()
        return min(READ_S, left)


class _TimedReader(io.RawIOBase):
    """The response's stream: each read waits at most until the deadline (a socket timeout is per read,
    and a server sending a byte every few seconds never trips one set once)."""

    def __init__(self, owner: _TimedSocket) -> None:
        self._owner = owner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        sock = self._owner.sock
        sock.settimeout(self._owner.clock.left())
        return int(sock.recv_into(buffer))

    def close(self) -> None:
        if not self.closed:
            super().close()
            self._owner.unref()


class _TimedSocket:
    """A connected socket (plain or TLS) whose reads and writes keep to the request's deadline. Closed
    for real when http.client and the response stream have both let go of it, as socket.makefile's are."""

    def __init__(self, sock: socket.socket, clock: _Clock) -> None:
        self.sock, self.clock = sock, clock
        self._refs, self._closed = 0, False

    def makefile(self, *_args: Any, **_kwargs: Any) -> io.BufferedReader:
        self._refs += 1
        return io.BufferedReader(_TimedReader(self))

    def sendall(self, data: Any) -> None:
        self.sock.settimeout(self.clock.left())
        self.sock.sendall(data)

    def unref(self) -> None:
        self._refs -= 1
        if self._closed and self._refs <= 0:
            self.sock.close()

    def close(self) -> None:
        self._closed = True
        if self._refs <= 0:
            self.sock.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


class _HTTPConnection(http.client.HTTPConnection):
    clock: _Clock

    def connect(self) -> None:
        super().connect()
        self.sock = _TimedSocket(self.sock, self.clock)


class _HTTPSConnection(http.client.HTTPSConnection):
    clock: _Clock

    def connect(self) -> None:
        super().connect()  # TCP and the TLS handshake, under the connect timeout (at most the time left)
        self.sock = _TimedSocket(self.sock, self.clock)


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, clock: _Clock) -> None:
        super().__init__()
        self.clock = clock

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        def connection(host: str, **kwargs: Any) -> _HTTPConnection:
            conn = _HTTPConnection(host, **kwargs)
            conn.clock = self.clock
            return conn

        return self.do_open(connection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, clock: _Clock) -> None:
        super().__init__()
        self.clock = clock

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        def connection(host: str, **kwargs: Any) -> _HTTPSConnection:
            conn = _HTTPSConnection(host, **kwargs)
            conn.clock = self.clock
            return conn

        return self.do_open(connection, req, context=self._context)  # type: ignore[attr-defined]


def _origin(url: str) -> tuple[str, str, int]:
    p = urllib.parse.urlsplit(url)
    scheme = p.scheme.lower()
    try:
        port = p.port
    except ValueError:
        port = -1
    return scheme, (p.hostname or "").lower(), port or (443 if scheme == "https" else 80)


def _show_origin(origin: tuple[str, str, int]) -> str:
    scheme, host, port = origin
    return f"{scheme}://{host}:{port}"


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Redirects on the server the user named are followed (the token goes with them); one to another
    scheme, host or port is an error naming both, and the token is not sent there."""

    max_redirections = 5

    def __init__(self, server: str) -> None:
        super().__init__()
        self.server = server

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        fp.close()  # its body is never read (urllib would read it whole)
        there, here = _origin(newurl), _origin(self.server)
        if there != here:
            path = urllib.parse.urlsplit(req.full_url).path
            raise LavaRedirectError(
                f"LAVA {self.server} redirected {path} to {newurl} ({_show_origin(there)}, not "
                f"{_show_origin(here)}): not followed, the token goes only to the server named "
                "(name the server by the URL it redirects to if that is right)"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def lavacli_config_path() -> Path:
    """Where lavacli keeps its identities: $XDG_CONFIG_HOME/lavacli.yaml, else ~/.config/lavacli.yaml."""
    return Path(os.path.expanduser(os.environ.get("XDG_CONFIG_HOME", "~/.config"))) / "lavacli.yaml"


def _rest_base(uri: str) -> str:
    """lavacli stores the XML-RPC endpoint (https://host/RPC2); the REST API sits beside it."""
    p = urllib.parse.urlsplit(uri)
    if p.scheme not in ("http", "https") or not p.hostname:
        raise RtgateError(f"not an http(s) URL of a LAVA server: {uri!r}")
    path = p.path.rstrip("/")
    if path.lower().endswith("/rpc2"):
        path = path[: -len("/rpc2")]
    netloc = p.hostname + (f":{p.port}" if p.port else "")  # never keep credentials in the URL
    return urllib.parse.urlunsplit((p.scheme, netloc, path + "/", "", ""))


@dataclass
class LavaServer:
    url: str  # the server's base URL, ending in /
    token: str
    requests: int = 0  # requests made: what `rtgate lab` paces its polling by
    deadline: float | None = None  # time.monotonic() by which every request must have ended
    notes: list[str] = field(default_factory=list)  # what was cut (a log too large), for the progress lines

    @classmethod
    def from_identity(cls, name: str) -> LavaServer:
        path = lavacli_config_path()
        raw = read_input(path, MAX_CONFIG_BYTES, RtgateError, "lavacli's identities")
        doc = load_yaml(raw.decode("utf-8", errors="replace"), str(path))[0]  # bounded
        entry = doc.get(name) if isinstance(doc, dict) else None
        if not isinstance(entry, dict) or not entry.get("uri"):
            known = ", ".join(sorted(doc)) if isinstance(doc, dict) else "none"
            raise RtgateError(f"no identity {name!r} with a uri (identities: {known})", path=str(path))
        uri = str(entry["uri"])
        token = entry.get("token")
        if token is None:  # lavacli also accepts credentials inside the URI
            token = urllib.parse.urlsplit(uri).password
        if not token:
            raise RtgateError(f"identity {name!r} has no token", path=str(path))
        return cls(_rest_base(uri), str(token))

    @classmethod
    def from_environment(cls) -> LavaServer:
        url, token = os.environ.get("RTGATE_LAVA_URL"), os.environ.get("RTGATE_LAVA_TOKEN")
        if not url or not token:
            raise RtgateError(
                "no LAVA server: give --identity NAME (lavacli's identities) or set "
                "RTGATE_LAVA_URL and RTGATE_LAVA_TOKEN"
            )
        return cls(_rest_base(url), token)

    # -- requests --------------------------------------------------------------------------
    def _until(self) -> float:
        until = time.monotonic() + REQUEST_S
        return min(until, self.deadline) if self.deadline is not None else until

    def _call(self, path: str, read: Callable[[Any], Any], data: Any = None, attempts: int = 1) -> Any:
        """One request (tried `attempts` times while its failure is worth a retry and time is left);
        `read` takes the response and returns what the caller wants, raising LavaApiError on garbage."""
        for attempt in range(attempts):
            try:
                return self._once(path, read, data)
            except LavaApiError as e:
                pause = RETRY_S * 2**attempt
                if not e.retry or attempt + 1 == attempts or time.monotonic() + pause >= self._until():
                    raise
                time.sleep(pause)
        raise AssertionError("unreachable")

    def _once(self, path: str, read: Callable[[Any], Any], data: Any) -> Any:
        self.requests += 1
        clock = _Clock(self._until())
        req = urllib.request.Request(
            self.url + "api/v0.2/" + path,
            method="POST" if data is not None else "GET",
            data=json.dumps(data).encode() if data is not None else None,
            headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json", "Accept": "*/*"},
        )
        opener = urllib.request.build_opener(_SameOrigin(self.url), _HTTPHandler(clock), _HTTPSHandler(clock))
        try:
            with opener.open(req, timeout=clock.left()) as r:
                return read(r)
        except urllib.error.HTTPError as e:
            try:
                with e:
                    body = _bounded(e, MAX_ERROR_BYTES, cut=True).decode(errors="replace")
            except (OSError, http.client.HTTPException):  # an error page cut off, or trickled past the deadline
                body = "(its page could not be read)"
            error = LavaApiError(f"LAVA {self.url} answered {e.code} to {path}: {' '.join(body.split())}")
            error.retry = e.code >= 500 or e.code in (408, 429)
            raise error from None
        except (_OutOfTime, urllib.error.URLError, OSError, http.client.HTTPException) as e:
            reason = getattr(e, "reason", e)
            if isinstance(reason, TimeoutError):
                if isinstance(reason, _OutOfTime) or clock.until - time.monotonic() < 0.1:
                    raise LavaTimeout(
                        f"LAVA {self.url} did not answer {path} in time ({self._waited(clock)})"
                    ) from None
                raise LavaApiError(f"LAVA {self.url} sent nothing for {READ_S:.0f} s while answering {path}") from None
            raise LavaApiError(f"cannot reach LAVA at {self.url}: {reason or type(e).__name__}") from None
        except ValueError as e:  # a redirect urllib cannot parse, a malformed header
            raise LavaApiError(f"LAVA {self.url} answered {path} with something unreadable: {e}") from None

    def _waited(self, clock: _Clock) -> str:
        if self.deadline is not None and clock.until >= self.deadline:
            return "the command's deadline passed"
        return f"no whole answer in {REQUEST_S:.0f} s"

    def _json(self, path: str, data: Any = None, attempts: int = 1) -> Any:
        def read(r: Any) -> Any:
            raw = _bounded(r, MAX_JSON_BYTES)
            try:
                return json.loads(raw)
            except ValueError:
                raise LavaApiError(f"LAVA {self.url} sent no JSON for {path}: {_sample(raw)}") from None

        return self._call(path, read, data, attempts)

    def submit(self, definition: str) -> int:
        # Never retried: the server may have made the job from a request whose answer was lost.
        reply = self._json("jobs/", {"definition": definition})
        ids = reply.get("job_ids") if isinstance(reply, dict) else None
        if not isinstance(ids, list) or not ids or not _is_id(ids[0]):
            raise LavaApiError(f"LAVA {self.url} accepted the job but named no job id: {_sample(reply)}")
        return int(ids[0])

    def job(self, job_id: int) -> dict[str, Any]:
        doc = self._json(f"jobs/{job_id}/", attempts=GET_ATTEMPTS)
        if not isinstance(doc, dict):
            raise LavaApiError(f"LAVA {self.url}: job {job_id} is not an object: {_sample(doc)}")
        return doc

    def jobs(self, job_ids: list[int]) -> dict[int, dict[str, Any]]:
        """Many jobs by id, one request per MAX_IDS_PER_QUERY: LAVA's job list filtered with id__in.
        A job the list does not show (not visible to this token, or a server that ignores the filter
        and lists other jobs) is simply absent. Asked once: the caller's polling retries, backing off."""
        wanted = set(job_ids)
        found: dict[int, dict[str, Any]] = {}
        for i in range(0, len(job_ids), MAX_IDS_PER_QUERY):
            chunk = job_ids[i : i + MAX_IDS_PER_QUERY]
            path = f"jobs/?id__in={','.join(str(j) for j in chunk)}&limit={len(chunk)}"
            doc = self._json(path)
            results = doc.get("results") if isinstance(doc, dict) else None
            if not isinstance(results, list):
                raise LavaApiError(f"LAVA {self.url} sent no page of results for {path}: {_sample(doc)}")
            for job in results:
                if isinstance(job, dict) and _is_id(job.get("id")) and job["id"] in wanted:
                    found[int(job["id"])] = job
        return found

    def results(self, job_id: int) -> list[Any]:
        """The job's results export (api/v0.2/jobs/<id>/yaml/): a YAML list, read with the bounded loader.
        Anything else is garbage, asked for again."""
        path = f"jobs/{job_id}/yaml/"

        def read(r: Any) -> list[Any]:
            raw = _bounded(r, MAX_RESULTS_BYTES, what=f"job {job_id}'s results")
            try:
                doc = load_yaml(
                    raw.decode("utf-8", errors="replace"), f"job {job_id} results", RtgateError, LAVA_RESULTS
                )[0]
            except RtgateError:
                doc = raw
            if not isinstance(doc, list):
                raise LavaApiError(f"LAVA {self.url} sent no list of results for {path}: {_sample(raw)}")
            return doc

        return list(self._call(path, read, attempts=GET_ATTEMPTS))

    def log_yaml(self, job_id: int, keep: Callable[[bytes], bool] = lambda _line: True) -> str:
        """The job's log: the lines `keep` accepts (one log entry a line, as lava-server and lava-run write
        it), read as a stream: at most MAX_LOG_BYTES are read, and a log cut there says so in `notes`."""

        def read(r: Any) -> str:
            kept, cut = _log_lines(r, keep)
            if cut:
                size = MAX_LOG_BYTES >> 20
                self.notes.append(f"job {job_id}'s log is larger than {size} MiB: only its first {size} MiB were read")
            return b"".join(kept).decode("utf-8", errors="replace")

        return str(self._call(f"jobs/{job_id}/logs/", read, attempts=GET_ATTEMPTS))

    def cancel(self, job_id: int) -> None:
        self._call(f"jobs/{job_id}/cancel/", lambda r: _bounded(r, MAX_JSON_BYTES))

    def job_url(self, job_id: int) -> str:
        return f"{self.url}scheduler/job/{job_id}"


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _sample(what: Any) -> str:
    """A short, one-line sample of a garbage answer, for the error message."""
    text = what.decode("utf-8", errors="replace") if isinstance(what, bytes) else repr(what)
    text = " ".join(text.split())
    return (text[:120] + "...") if len(text) > 120 else (text or "(empty)")


def _bounded(r: Any, limit: int, what: str = "the answer", cut: bool = False) -> bytes:
    """A response body of at most `limit` bytes, read a chunk at a time (each read keeps to the
    deadline). A longer one is an error, or cut at `limit` when `cut`."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit and (chunk := r.read1(min(1 << 16, limit + 1 - size))):
        chunks.append(chunk)
        size += len(chunk)
    if size > limit and not cut:
        error = LavaApiError(f"{what} from LAVA is larger than {_size(limit)}: not read")
        error.retry = False  # it would be as large again
        raise error
    return b"".join(chunks)[:limit]


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} bytes"


def _log_lines(r: Any, keep: Callable[[bytes], bool]) -> tuple[list[bytes], bool]:
    """The log's lines `keep` accepts, and whether the log was cut at MAX_LOG_BYTES. Memory stays at one
    chunk, one line and the kept lines: a line longer than MAX_LOG_LINE (which lava-server never writes)
    is skipped whole, so that no piece of it is kept as a line of its own."""
    kept: list[bytes] = []
    partial = b""
    skipping = False  # inside a line too long to keep: dropped up to its newline
    size = 0
    while size < MAX_LOG_BYTES and (chunk := r.read1(min(1 << 20, MAX_LOG_BYTES - size))):
        size += len(chunk)
        lines = (partial + chunk).split(b"\n")
        partial = lines.pop()
        if skipping and lines:
            lines, skipping = lines[1:], False
        if skipping or len(partial) > MAX_LOG_LINE:
            partial, skipping = b"", True
        kept += [line + b"\n" for line in lines if len(line) <= MAX_LOG_LINE and keep(line)]
    cut = size >= MAX_LOG_BYTES and bool(r.read1(1))
    if partial and not cut and keep(partial):
        kept.append(partial + b"\n")
    return kept, cut
