"""`nextcloud-mcp-bridge check`: is the configured Nextcloud usable, and if not, why?

Each check prints one line; the first failure that makes later checks meaningless stops the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import aiohttp
import pydantic

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, NextcloudError, NotFound, Unauthorized
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, json_body
from nextcloud_mcp_server.nextcloud.models import ServerStatus
from nextcloud_mcp_server.nextcloud.ocs import OCSClient

__all__ = ["TLS_OFF", "Check", "format_report", "run_checks"]

Status = Literal["ok", "warn", "fail", "skip"]
TLS_OFF = (
    "NEXTCLOUD_VERIFY_TLS=false: Nextcloud's certificate is not checked, so anyone on the path can "
    "read and change every request, passwords and tokens included. Set NEXTCLOUD_CA_BUNDLE to the "
    "CA that signed it instead"
)

_PRINCIPAL_QUERY = (
    '<?xml version="1.0"?><d:propfind xmlns:d="DAV:">'
    "<d:prop><d:current-user-principal/></d:prop></d:propfind>"
)


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


Clock = Callable[[], float]


async def run_checks(
    settings: Settings,
    *,
    trace_configs: Sequence[aiohttp.TraceConfig] = (),
    clock: Clock = time.perf_counter,
) -> list[Check]:
    """Run the checks in order; later checks are skipped once one they depend on failed.

    `clock` times the requests that tell a login password from an app password (tests pass one
    that advances by a set amount per request, so the verdict never depends on machine speed;
    `trace_configs` let them see each request)."""
    results: list[Check] = []
    if not settings.nextcloud_verify_tls:
        results.append(Check("tls", "warn", TLS_OFF))
    options = settings.nextcloud_http_options()
    options.update(timeout=min(settings.nextcloud_timeout_seconds, 15.0), max_retries=0)
    http = NextcloudHTTP(settings.nextcloud_host or "", **options, trace_configs=trace_configs)
    credential = BasicCredential(
        settings.nextcloud_username or "",
        settings.nextcloud_password.get_secret_value() if settings.nextcloud_password else "",
    )
    try:
        await _checks(http, credential, results, clock)
    finally:
        await http.aclose()
    names = [c.name for c in results]
    for later in ("reachable", "credentials", "notes app", "webdav", "caldav"):
        if later not in names:
            results.append(Check(later, "skip", "not checked: an earlier check failed"))
    return results


def _not_nextcloud(host: str, what: str) -> Check:
    return Check(
        "reachable",
        "fail",
        f"{host} answered, but it is not a Nextcloud ({what}). NEXTCLOUD_HOST must be the address "
        "you open Nextcloud at, with its subfolder if it has one (e.g. https://example.com/nextcloud)",
    )


def _is_status(body: object) -> bool:
    """Nextcloud's /status.php always carries these keys; other servers' JSON does not."""
    return isinstance(body, dict) and {"installed", "version"} <= body.keys()


async def _checks(
    http: NextcloudHTTP, credential: BasicCredential, results: list[Check], clock: Clock
) -> None:
    ocs = OCSClient(http, credential)

    started = clock()
    try:
        raw = await http.request("GET", "/status.php", credential=None)
        plain = clock() - started
        body = json_body(raw, http.host)
        if not _is_status(body):
            results.append(_not_nextcloud(http.host, "its /status.php is not Nextcloud's"))
            return
        status = ServerStatus.model_validate(body)
    except NotFound:
        results.append(_not_nextcloud(http.host, "no /status.php, HTTP 404"))
        return
    except InvalidResponse as exc:
        results.append(_not_nextcloud(http.host, f"/status.php: {exc.message}"))
        return
    except pydantic.ValidationError:
        results.append(_not_nextcloud(http.host, "its /status.php is not Nextcloud's"))
        return
    except NextcloudError as exc:
        results.append(Check("reachable", "fail", str(exc)))
        return
    if not status.installed or status.maintenance or status.needs_db_upgrade:
        state = "in maintenance mode" if status.maintenance else "not installed or needs an upgrade"
        results.append(Check("reachable", "fail", f"{status.productname} at {http.host} is {state}"))
        return
    version = status.versionstring or status.version
    results.append(Check("reachable", "ok", f"{status.productname} {version} answered in {_ms(plain)}"))

    try:
        user = await ocs.current_user()
        started = clock()
        await ocs.current_user()
        authenticated = clock() - started
    except Unauthorized:
        results.append(
            Check(
                "credentials",
                "fail",
                f"Nextcloud at {http.host} rejected user '{credential.username}' and its password; "
                "create an app password under Settings > Security > Devices & sessions",
            )
        )
        return
    except NextcloudError as exc:
        results.append(Check("credentials", "fail", str(exc)))
        return
    results.append(Check("credentials", "ok", f"logged in as '{user.id}' ({user.display_name or user.id})"))
    # A login password makes Nextcloud verify a password hash on every request (0.5-1.3 s seen on
    # a real server); an app password answers in tens of milliseconds.
    if authenticated > max(0.25, 5 * plain):
        results.append(
            Check(
                "password type",
                "warn",
                f"an authenticated request took {_ms(authenticated)} against {_ms(plain)} without "
                "credentials: this looks like a login password. An app password (Settings > "
                "Security > Devices & sessions) makes every request 10-20x faster",
            )
        )

    try:
        notes = await ocs.notes_capability()
    except NextcloudError as exc:
        results.append(Check("notes app", "fail", str(exc)))
    else:
        if notes is None:
            results.append(Check("notes app", "fail", "the Notes app is not installed or not enabled"))
        elif not any(v.startswith("1.") for v in notes.api_version):
            found = ", ".join(notes.api_version) or "none"
            results.append(Check("notes app", "fail", f"Notes API v1 is not offered (found {found})"))
        else:
            results.append(Check("notes app", "ok", f"Notes {notes.version}, API {max(notes.api_version)}"))

    await _dav_check(http, credential, results, "webdav", f"/remote.php/dav/files/{user.id}/", None)
    await _dav_check(http, credential, results, "caldav", "/remote.php/dav/", _PRINCIPAL_QUERY)


async def _dav_check(
    http: NextcloudHTTP,
    credential: BasicCredential,
    results: list[Check],
    name: str,
    path: str,
    body: str | None,
) -> None:
    try:
        response = await http.request(
            "PROPFIND",
            path,
            credential=credential,
            headers={"Depth": "0", "Content-Type": "application/xml"},
            content=body,
        )
    except NextcloudError as exc:
        results.append(Check(name, "fail", str(exc)))
        return
    if response.status_code != 207:
        results.append(Check(name, "fail", f"{path} answered HTTP {response.status_code}, expected 207"))
    else:
        results.append(Check(name, "ok", f"{path} answers"))


def format_report(settings: Settings, results: list[Check]) -> str:
    marks = {"ok": " ok ", "warn": "warn", "fail": "FAIL", "skip": "skip"}
    lines = [f"Nextcloud check for {settings.nextcloud_host} as '{settings.nextcloud_username}'"]
    lines += [f"  [{marks[c.status]}] {c.name:<14} {c.detail}" for c in results]
    failed = sum(c.status == "fail" for c in results)
    warned = sum(c.status == "warn" for c in results)
    if failed:
        lines.append(f"Result: {failed} check(s) failed")
    else:
        lines.append("Result: ready" + (f" ({warned} warning(s))" if warned else ""))
    return "\n".join(lines)
