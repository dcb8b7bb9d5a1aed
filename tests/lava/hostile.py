# SPDX-License-Identifier: GPL-2.0-or-later
"""A LAVA server that misbehaves on purpose, for `rtgate lab`'s safety tests (issue 47). The real server
(server.py) is what `rtgate lab` is proved against; this double only answers LAVA's REST API
(api/v0.2) as far as `rtgate lab` uses it, with one job whose results and log are known, and can make
any of its answers hostile: a redirect to another host, port or scheme, one on the same server, a body
of gigabytes, a body trickled a byte every two seconds, no answer at all, or garbage.

It listens on 127.0.0.1 only, in threads of the test's own process; every loop is bounded (a trickle
by TRICKLE_MAX_S, a huge body by its size) and ends when the double is closed. Every request is
logged with its headers, so a test can show which host saw the token. Test tooling, not shipped."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

JOB = 7
TRICKLE_S = 2.0  # one byte every TRICKLE_S
TRICKLE_MAX_S = 300.0  # a trickle ends by then in any case
SILENT_MAX_S = 300.0
CHUNK = 1 << 20

# The job's known answer, for thresholds/two-thread-example.yaml's measurement "app": LAVA records
# a-max pass (42 us) and b-over-100us fail; the board's console says the latter was INCONCLUSIVE, so
# the verdicts show whether the log was read: app/a-max PASS, app/b-over-100us INCONCLUSIVE.
RESULTS = (
    "- {suite: 0_rtgate-app, name: a-max-A, result: pass, measurement: '42', unit: us}\n"
    "- {suite: 0_rtgate-app, name: b-over-100us-B, result: fail, measurement: '3', unit: '%'}\n"
)
LOG_HEAD = (
    '- {"dt": "2026-01-01T00:00:00", "lvl": "target", "msg": "Linux version 6.1.0-hostile (gcc) #1 SMP"}\n'
    '- {"dt": "2026-01-01T00:00:01", "lvl": "target", '
    '"msg": "rtgate: INCONCLUSIVE app/b-over-100us[B]: stopped early"}\n'
)
NOISE_LINE = b'- {"dt": "2026-01-01T00:00:02", "lvl": "target", "msg": "' + b"n" * 120 + b'"}\n'
GARBAGE = {
    "xml": (
        "text/xml",
        b"<?xml version='1.0'?><methodResponse><fault><value><struct><member><name>faultString</name>"
        b"<value><string>no</string></value></member></struct></value></fault></methodResponse>",
    ),
    "html": ("text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
    "truncated": ("application/json", b'{"results": [{"id": 7, "state": "Fini'),
    "shape": ("application/json", b'{"results": {"id": 7}}'),
    "empty": ("application/json", b""),
}


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    port: int
    at: float  # time.monotonic() when the request arrived


@dataclass
class Hostile:
    """faults: route -> fault, route one of submit, list, job, results, log, cancel; fault one of
    redirect-away (to `away`), redirect-scheme (https on the same host and port), redirect-same (to
    /moved/..., served normally), huge (`huge_bytes` of a valid beginning and noise), trickle, silent,
    or a GARBAGE kind. state: the job's state in the job list (Running keeps `rtgate lab` polling)."""

    faults: dict[str, str] = field(default_factory=dict)
    state: str = "Finished"
    away: str = ""  # base URL of the other host a redirect-away points to
    huge_bytes: int = 3 << 30
    seen: list[Seen] = field(default_factory=list)
    closing: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:
                pass

            def do_GET(self) -> None:
                double._serve(self)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(min(length, 1 << 20))
                double._serve(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> Hostile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def requests_to(self, route: str) -> list[Seen]:
        return [s for s in self.seen if _route(s.method, s.path.removeprefix("/moved"))[0] == route]

    # -- answers ----------------------------------------------------------------------------
    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        self.seen.append(Seen(h.command, h.path, dict(h.headers.items()), self.port, time.monotonic()))
        moved = h.path.startswith("/moved/")
        path = h.path[len("/moved") :] if moved else h.path
        route, body = _route(h.command, path, self.state)
        fault = "" if moved else self.faults.get(route, "")
        try:
            if fault.startswith("redirect-"):
                target = {
                    "redirect-away": self.away.rstrip("/") + path,
                    "redirect-scheme": f"https://127.0.0.1:{self.port}{path}",
                    "redirect-same": "/moved" + path,
                }[fault]
                self._send(h, 302, b"", "text/plain", {"Location": target})
            elif fault == "silent":
                self.closing.wait(SILENT_MAX_S)
            elif fault == "trickle":
                self._trickle(h, body)
            elif fault == "huge":
                self._huge(h, body)
            elif fault in GARBAGE:
                kind, data = GARBAGE[fault]
                self._send(h, 200, data, kind)
            elif route == "unknown":
                self._send(h, 404, b'{"detail": "Not found."}', "application/json")
            else:
                self._send(h, 200, body, "application/json")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away: what the bounded reader does

    @staticmethod
    def _send(
        h: BaseHTTPRequestHandler, code: int, body: bytes, kind: str, extra: dict[str, str] | None = None
    ) -> None:
        h.send_response(code)
        h.send_header("Content-Type", kind)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Connection", "close")
        for k, v in (extra or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)
        h.close_connection = True

    def _trickle(self, h: BaseHTTPRequestHandler, body: bytes) -> None:
        """The status line, then the headers and body a byte every TRICKLE_S: each read gets something,
        so no per-read timeout ever trips."""
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ends = time.monotonic() + TRICKLE_MAX_S
        for byte in head.encode() + body:
            if self.closing.wait(TRICKLE_S) or time.monotonic() > ends:
                return
            h.wfile.write(bytes([byte]))
            h.wfile.flush()
        h.close_connection = True

    def _huge(self, h: BaseHTTPRequestHandler, body: bytes) -> None:
        """A valid beginning, then noise lines up to huge_bytes, sent as fast as the client reads."""
        h.send_response(200)
        h.send_header("Content-Type", "application/yaml")
        h.send_header("Content-Length", str(self.huge_bytes))
        h.send_header("Connection", "close")
        h.end_headers()
        block = NOISE_LINE * (CHUNK // len(NOISE_LINE))
        h.wfile.write(body)
        sent = len(body)
        while sent < self.huge_bytes and not self.closing.is_set():
            part = block[: self.huge_bytes - sent]
            h.wfile.write(part)
            sent += len(part)
        h.close_connection = True


def _route(method: str, path: str, state: str = "Finished") -> tuple[str, bytes]:
    """Which part of the API a request is for, and its well-behaved answer."""
    p = urlsplit(path)
    parts = [x for x in p.path.split("/") if x]
    if parts[:2] != ["api", "v0.2"] or parts[2:3] != ["jobs"]:
        return "unknown", b""
    rest = parts[3:]
    job = {"id": JOB, "state": state, "health": "Complete" if state == "Finished" else "Unknown"}
    if not rest and method == "POST":
        return "submit", json.dumps({"message": "job(s) successfully submitted", "job_ids": [JOB]}).encode()
    if not rest:
        ids = parse_qs(p.query).get("id__in", [""])[0].split(",")
        return "list", json.dumps({"count": 1, "results": [job] if str(JOB) in ids else []}).encode()
    if rest == [str(JOB)]:
        return "job", json.dumps(job).encode()
    if rest == [str(JOB), "yaml"]:
        return "results", RESULTS.encode()
    if rest == [str(JOB), "logs"]:
        return "log", LOG_HEAD.encode()
    if rest == [str(JOB), "cancel"]:
        return "cancel", b"{}"
    return "unknown", b""
