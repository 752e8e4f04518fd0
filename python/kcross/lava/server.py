"""A LAVA server's job, taken straight from the server (``kcross import --lava-server URL
--lava-job N``; docs/lava.md, issue 25).

LAVA's log does not name the device that ran the job; the server does.  From its REST API
(``/api/v0.2/``, LAVA 2020.05 on; lava_rest_app): ``jobs/N/`` (the job: its ``state``,
``health``, ``requested_device_type`` and ``actual_device``), ``jobs/N/logs/`` (the job's log,
the same bytes as ``lavacli jobs logs N --raw``) and ``jobs/N/yaml/`` (its results export,
as ``lavacli results N --yaml``).  A job made by ``kcross lava job`` is public: no token is
needed to read it.

What the user gives is checked before anything is downloaded (:func:`check_server`,
:func:`check_job`): one line each, exit 2.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from kcross.errors import UserError, clipped

API = "api/v0.2"
# A job's id: N, or N.M for a sub-job of a multinode job.
JOB_ID = re.compile(r"^[0-9]+(?:\.[0-9]+)?$")
TIMEOUT = 60.0       # seconds for each request
FINISHED = "Finished"


class ServerError(UserError):
    """The server cannot give the job (one line; exit 2, nothing stored)."""


@dataclass(frozen=True)
class ServerJob:
    """What the server says of a finished job, and its log and results export."""

    server: str                  # the server's URL (check_server's form)
    job_id: str
    device: str | None           # actual_device: the device that ran it
    device_type: str | None      # requested_device_type
    health: str | None           # Complete, Incomplete, Canceled
    log: bytes                   # jobs/N/logs/
    results: str                 # jobs/N/yaml/

    @property
    def name(self) -> str:
        """How messages name the job's log."""
        return f"{self.server} job {self.job_id}"


def check_server(url: str) -> str:
    """``--lava-server URL``: a LAVA server's http:// or https:// URL (its root; lavacli's
    identity URL, ``.../RPC2``, is taken too), returned without the trailing ``/``."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UserError(f"--lava-server {clipped(url)}: give the LAVA server's http:// or "
                        "https:// URL (e.g. https://lava.example.org)")
    if parsed.query or parsed.fragment:
        raise UserError(f"--lava-server {clipped(url)}: the server's URL, without ?query "
                        "or #fragment")
    path = parsed.path.rstrip("/")
    if path.endswith("/RPC2"):
        path = path[:-len("/RPC2")]
    return urllib.parse.urlunparse((parsed.scheme, parsed.netloc, path, "", "", ""))


def check_job(text: str) -> str:
    """``--lava-job N``: a LAVA job's id (N, or N.M for a multinode sub-job)."""
    if not JOB_ID.match(text):
        raise UserError(f"--lava-job {clipped(text)}: a LAVA job's id is a number "
                        "(e.g. 1234, or 1234.0 for a multinode sub-job)")
    return text


def _get(url: str, what: str) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "kcross"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        hint = {404: "no such job there (or a private one: kcross reads public jobs; "
                     "fetch a private job's log with lavacli)",
                403: "not allowed to read it (a private job: fetch its log with lavacli)",
                401: "not allowed to read it (a private job: fetch its log with lavacli)",
                }.get(exc.code, exc.reason)
        raise ServerError(f"{what}: HTTP {exc.code}: {hint}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise ServerError(f"{what}: cannot reach the server: {reason}") from None


def fetch_job(server: str, job_id: str) -> ServerJob:
    """The finished job ``job_id`` of ``server`` (both checked), its log and results."""
    base = f"{server}/{API}/jobs/{job_id}/"
    what = f"LAVA job {job_id} of {server}"
    try:
        job: Any = json.loads(_get(base, what))
    except ValueError:
        raise ServerError(f"{what}: {base} is not LAVA's REST API (no JSON): is "
                          f"{server} a LAVA server (2020.05 or later)?") from None
    if not isinstance(job, dict) or "state" not in job:
        raise ServerError(f"{what}: {base} is not a LAVA job")
    state = job.get("state")
    if state != FINISHED:
        raise ServerError(f"{what} is {state}: nothing to import until it has finished "
                          f"(lavacli jobs wait {job_id})")

    def text(key: str) -> str | None:
        value = job.get(key)
        return None if value in (None, "") else str(value)

    log = _get(base + "logs/", f"{what} (its log)")
    results = _get(base + "yaml/", f"{what} (its results)").decode("utf-8", "replace")
    return ServerJob(server=server, job_id=job_id, device=text("actual_device"),
                     device_type=text("requested_device_type"), health=text("health"),
                     log=log, results=results)
