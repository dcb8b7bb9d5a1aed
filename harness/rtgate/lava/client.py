# SPDX-License-Identifier: GPL-2.0-or-later
"""A LAVA server's REST API (api/v0.2), just what `rtgate lab` needs: submit, follow, cancel, read
results and logs. Where the server and token come from: lavacli's own identities file, or the
environment (RTGATE_LAVA_URL, RTGATE_LAVA_TOKEN)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtgate.core.yamlload import load_yaml
from rtgate.errors import RtgateError

MAX_CONFIG_BYTES = 1 << 20
# Job ids per list query: the URL stays under 1 KiB, well inside any web server's request-line limit
# (gunicorn's is 4094 bytes).
MAX_IDS_PER_QUERY = 100


class LavaApiError(RtgateError):
    """The server refused a request or could not be reached."""


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

    @classmethod
    def from_identity(cls, name: str) -> LavaServer:
        path = lavacli_config_path()
        try:
            if path.stat().st_size > MAX_CONFIG_BYTES:
                raise RtgateError("larger than 1 MiB: not a lavacli configuration", path=str(path))
            doc = load_yaml(path.read_text(encoding="utf-8", errors="replace"), str(path))[0]  # bounded
        except OSError as e:
            raise RtgateError(f"cannot read lavacli's identities: {e.strerror}", path=str(path)) from e
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
    def _request(self, path: str, data: Any = None, timeout: float = 60) -> bytes:
        self.requests += 1
        req = urllib.request.Request(
            self.url + "api/v0.2/" + path,
            method="POST" if data is not None else "GET",
            data=json.dumps(data).encode() if data is not None else None,
            headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json", "Accept": "*/*"},
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return bytes(r.read())
        except urllib.error.HTTPError as e:
            body = e.read().decode(errors="replace")[:500]
            raise LavaApiError(f"LAVA {self.url} answered {e.code} to {path}: {body}") from e
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise LavaApiError(f"cannot reach LAVA at {self.url}: {reason}") from e

    def _json(self, path: str, data: Any = None) -> Any:
        raw = self._request(path, data)
        try:
            return json.loads(raw)
        except ValueError as e:
            raise LavaApiError(f"LAVA {self.url} sent no JSON for {path}") from e

    def submit(self, definition: str) -> int:
        reply = self._json("jobs/", {"definition": definition})
        ids = reply.get("job_ids") if isinstance(reply, dict) else None
        if not ids:
            raise LavaApiError(f"LAVA {self.url} accepted the job but named no job id: {reply!r}")
        return int(ids[0])

    def job(self, job_id: int) -> dict[str, Any]:
        doc = self._json(f"jobs/{job_id}/")
        if not isinstance(doc, dict):
            raise LavaApiError(f"LAVA {self.url}: job {job_id} is not an object")
        return doc

    def jobs(self, job_ids: list[int]) -> dict[int, dict[str, Any]]:
        """Many jobs by id, one request per MAX_IDS_PER_QUERY: LAVA's job list filtered with id__in.
        A job the list does not show (not visible to this token, or a server that ignores the filter
        and lists other jobs) is simply absent."""
        wanted = set(job_ids)
        found: dict[int, dict[str, Any]] = {}
        for i in range(0, len(job_ids), MAX_IDS_PER_QUERY):
            chunk = job_ids[i : i + MAX_IDS_PER_QUERY]
            path = f"jobs/?id__in={','.join(str(j) for j in chunk)}&limit={len(chunk)}"
            doc = self._json(path)
            results = doc.get("results") if isinstance(doc, dict) else None
            if not isinstance(results, list):
                raise LavaApiError(f"LAVA {self.url}: the job list is not a page of results")
            for job in results:
                if isinstance(job, dict) and job.get("id") in wanted:
                    found[int(job["id"])] = job
        return found

    def results_yaml(self, job_id: int) -> str:
        return self._request(f"jobs/{job_id}/yaml/").decode("utf-8", errors="replace")

    def log_yaml(self, job_id: int) -> str:
        return self._request(f"jobs/{job_id}/logs/", timeout=120).decode("utf-8", errors="replace")

    def cancel(self, job_id: int) -> None:
        self._request(f"jobs/{job_id}/cancel/")

    def job_url(self, job_id: int) -> str:
        return f"{self.url}scheduler/job/{job_id}"
