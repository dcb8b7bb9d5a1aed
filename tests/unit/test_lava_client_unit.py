# SPDX-License-Identifier: GPL-2.0-or-later
"""The LAVA client's bounds in-process (issue 47): which redirects keep the token, how a body and a log are
read with a bound. Streams stand in for a response (they have its read1); the client against a hostile
server, as a process: tests/system/test_lava_hostile.py."""

from __future__ import annotations

import io
import urllib.request

import pytest

from rtgate.lava import client
from rtgate.lava.client import LavaApiError, LavaRedirectError, _bounded, _log_lines, _origin, _SameOrigin


@pytest.mark.parametrize(
    "url,origin",
    [
        ("http://lava.example/api/", ("http", "lava.example", 80)),
        ("https://LAVA.example/", ("https", "lava.example", 443)),
        ("https://lava.example:8443/x", ("https", "lava.example", 8443)),
        ("http://127.0.0.1:80/", ("http", "127.0.0.1", 80)),
    ],
)
def test_an_origin_is_scheme_host_and_port(url: str, origin: tuple[str, str, int]) -> None:
    assert _origin(url) == origin


@pytest.mark.parametrize(
    "target,followed",
    [
        ("http://lava.example/api/v0.2/moved/", True),
        ("http://lava.example:80/x", True),  # the default port, written out
        ("https://lava.example/x", False),  # another scheme: the token would go to another service
        ("http://lava.example:8080/x", False),
        ("http://collector.example/x", False),
        ("http://lava.example.collector.example/x", False),
    ],
)
def test_only_a_redirect_on_the_same_server_keeps_the_token(target: str, followed: bool) -> None:
    handler = _SameOrigin("http://lava.example/")
    req = urllib.request.Request("http://lava.example/api/v0.2/jobs/", headers={"Authorization": "Token t"})
    fp = io.BytesIO(b"body never read")
    if followed:
        new = handler.redirect_request(req, fp, 302, "Found", {}, target)
        assert new is not None and new.get_header("Authorization") == "Token t"
    else:
        with pytest.raises(LavaRedirectError) as e:
            handler.redirect_request(req, fp, 302, "Found", {}, target)
        assert f"to {target}" in str(e.value) and "not http://lava.example:80" in str(e.value)
    assert fp.closed


def test_a_body_over_its_bound_is_refused_or_cut() -> None:
    assert _bounded(io.BytesIO(b"x" * 100), 100) == b"x" * 100
    with pytest.raises(LavaApiError, match="the answer from LAVA is larger than 99 bytes: not read") as e:
        _bounded(io.BytesIO(b"x" * 100), 99)
    assert not e.value.retry
    assert _bounded(io.BytesIO(b"x" * 100), 10, cut=True) == b"x" * 10


def test_a_log_keeps_only_the_lines_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    log = b"- {msg: boot}\n- {msg: 'rtgate: PASS m/g[t]: ok'}\n- {msg: noise}\n- {msg: 'rtgate: last'}"
    kept, cut = _log_lines(io.BytesIO(log), lambda line: b"rtgate: " in line)
    assert kept == [b"- {msg: 'rtgate: PASS m/g[t]: ok'}\n", b"- {msg: 'rtgate: last'}\n"] and not cut


def test_a_log_beyond_its_bound_is_cut_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "MAX_LOG_BYTES", 40)
    log = b"rtgate: 1\n" + b"n" * 25 + b"\nrtgate: 2 (beyond the bound)\n"
    kept, cut = _log_lines(io.BytesIO(log), lambda line: line.startswith(b"rtgate: "))
    assert kept == [b"rtgate: 1\n"] and cut
    kept, cut = _log_lines(io.BytesIO(log[:40]), lambda line: line.startswith(b"rtgate: "))
    assert not cut  # exactly at the bound: nothing was left unread


class Trickle(io.BytesIO):
    """A response that hands out a few bytes a read, as a slow server's does."""

    def read1(self, size: int = -1) -> bytes:
        return super().read1(min(size, 5) if size >= 0 else 5)


def test_a_log_line_beyond_lava_s_longest_is_skipped_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "MAX_LOG_LINE", 12)
    log = b"rtgate: 1\nrtgate: a line far too long, rtgate: inside it\nrtgate: 2\n"
    for stream in (io.BytesIO(log), Trickle(log)):
        kept, _ = _log_lines(stream, lambda line: b"rtgate: " in line)
        assert kept == [b"rtgate: 1\n", b"rtgate: 2\n"], kept
