"""`nextcloud-mcp-bridge check`: is the configured Nextcloud usable, and if not, why?

Each check prints one line; the first failure that makes later checks meaningless stops the run.
`StartupCheck` runs the essential ones when the server starts, in the background: it logs the
outcome, and the first tool call that fails after a failed check carries the check's words.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import pydantic

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.config.validity import chosen_toolsets
from nextcloud_mcp_server.index.service import ocr_problem
from nextcloud_mcp_server.nextcloud.apps import enabled_apps
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse, NextcloudError, NotFound, Unauthorized
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, json_body
from nextcloud_mcp_server.nextcloud.models import ServerStatus
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.toolsets import declarations

if TYPE_CHECKING:
    import aiohttp

__all__ = ["TLS_OFF", "Check", "StartupCheck", "format_report", "run_checks"]

logger = logging.getLogger(__name__)
STARTUP_CHECK_SECONDS = 10.0
# The oldest and newest major releases the test suite runs against (29.0.6 and 34.0.1).
TESTED_MAJORS = (29, 34)

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
    essential: bool = False,
) -> list[Check]:
    """Run the checks in order; later checks are skipped once one they depend on failed.

    `clock` times the requests that tell a login password from an app password (tests pass one
    that advances by a set amount per request, so the verdict never depends on machine speed;
    `trace_configs` let them see each request). `essential`: only what every tool needs (the
    server is reachable; in single-user mode, the credentials), as the server checks at start."""
    results: list[Check] = []
    if not essential:
        results.append(_settings_check(settings))
        if settings.find_ocr:  # docs/ADR/0096
            problem = ocr_problem(settings)
            ready = f"tesseract reads {settings.find_ocr_languages}"
            results.append(Check("ocr", "fail" if problem else "ok", problem or ready))
    if not settings.nextcloud_verify_tls:
        results.append(Check("tls", "warn", TLS_OFF))
    if settings.host_note:
        results.append(Check("address", "warn", settings.host_note))
    options = settings.nextcloud_http_options()
    options.update(timeout=min(settings.nextcloud_timeout_seconds, 15.0), max_retries=0)
    http = NextcloudHTTP(settings.nextcloud_host or "", **options, trace_configs=trace_configs)
    credential = BasicCredential(
        settings.nextcloud_username or "",
        settings.nextcloud_password.get_secret_value() if settings.nextcloud_password else "",
    )
    try:
        await _checks(
            http, credential, results, clock, essential=essential, with_credentials=not settings.oauth_enabled
        )
        if not essential and all(c.status != "fail" for c in results):
            await _app_checks(OCSClient(http, credential), settings, results)
    finally:
        await http.aclose()
    if essential:
        return results
    names = [c.name for c in results]
    for later in ("reachable", "credentials", "notes app", "webdav", "caldav"):
        if later not in names:
            results.append(Check(later, "skip", "not checked: an earlier check failed"))
    return results


def _settings_check(settings: Settings) -> Check:
    """The settings as `run` reads them (they passed `config.validity`, or check stopped before)."""
    chosen = chosen_toolsets(settings)
    names = ", ".join(found.name for found in declarations() if found.name in chosen)
    return Check("settings", "ok", f"permissions {settings.nextcloud_mcp_permissions}, toolsets {names}")


async def _app_checks(ocs: OCSClient, settings: Settings, results: list[Check]) -> None:
    """Per chosen toolset of a Nextcloud app: is the app enabled for this user? A toolset whose
    app is missing is not offered to the user (docs/ADR/0042), so this says why and what to do."""
    chosen = chosen_toolsets(settings)
    needed = [found for found in declarations() if found.name in chosen and found.app is not None]
    if not needed:
        return
    try:
        enabled = await enabled_apps(ocs)
    except NextcloudError as exc:
        results.append(Check("apps", "warn", f"could not ask which apps are enabled: {exc}"))
        return
    for found in needed:
        assert found.app is not None
        if found.app.id in enabled:
            results.append(Check(f"{found.name} toolset", "ok", f"{found.app.name} is enabled for you"))
            continue
        results.append(
            Check(
                f"{found.name} toolset",
                "warn",
                f"{found.app.name} (app id '{found.app.id}') is not installed or not enabled for you, "
                f"so its tools are not offered. An administrator enables it under Apps (or: occ "
                f"app:enable {found.app.id}) and, if it is limited to groups, adds you to one; or leave "
                f"'{found.name}' out of NEXTCLOUD_MCP_TOOLSETS",
            )
        )


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
    http: NextcloudHTTP,
    credential: BasicCredential,
    results: list[Check],
    clock: Clock,
    *,
    essential: bool = False,
    with_credentials: bool = True,
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
    major = ascii_number(status.version.split(".")[0]) or 0
    if not TESTED_MAJORS[0] <= major <= TESTED_MAJORS[1]:
        results.append(
            Check(
                "version",
                "warn",
                f"Nextcloud {version} is outside the releases this server is tested with "
                f"({TESTED_MAJORS[0]} to {TESTED_MAJORS[1]}); most of it should work, but nothing "
                "here has been seen to",
            )
        )
    if essential and not with_credentials:
        return

    authenticated = 0.0
    try:
        user = await ocs.current_user()
        if not essential:  # asked again, timed, to tell a login password from an app password
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
    if essential:
        return
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


class StartupCheck:
    """The essential checks, run once in the background when the server starts (bounded, so the
    MCP handshake never waits for them).

    `who` (single-user mode): who the configured credentials belong to, asked through the
    discovery every tool shares (docs/ADR/0069), so that a new process asks `cloud/user` once, in
    parallel with its first call, and `status.php` only when that failed and the full check
    must say why."""

    def __init__(
        self,
        settings: Settings,
        *,
        seconds: float | None = None,
        who: Callable[[], Awaitable[str]] | None = None,
    ) -> None:
        self.settings = settings
        self.seconds = STARTUP_CHECK_SECONDS if seconds is None else seconds
        self._who = who
        # stdio: a host that starts a process per conversation lists tools first; the check
        # then runs beside the first call instead of delaying `tools/list` (docs/ADR/0069)
        self.at_first_call = False
        self.problem: str | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.settings.host_note:
            logger.warning("%s", self.settings.host_note)
        if not self.at_first_call:
            self.first_call()

    def first_call(self) -> None:
        """Begin the check, if it has not begun (every tool call says so)."""
        if self.settings.nextcloud_host and self._task is None:
            self._task = asyncio.create_task(self._run(), name="nextcloud-startup-check")

    async def _run(self) -> None:
        host = self.settings.nextcloud_host
        try:
            async with asyncio.timeout(self.seconds):
                results = await self._results()
        except TimeoutError:
            self.problem = (
                f"Nextcloud at {host} gave no answer within {self.seconds:g} s when this server started"
            )
            logger.warning("Nextcloud check at start: %s", self.problem)
            return
        failed = next((c for c in results if c.status == "fail"), None)
        if failed is not None:
            self.problem = failed.detail
            logger.warning(
                "Nextcloud check at start failed: %s (run `nextcloud-mcp-bridge check`)", failed.detail
            )
        else:
            passed = "; ".join(c.detail for c in results if c.status == "ok")
            logger.info("Nextcloud check at start: %s", passed)

    async def _results(self) -> list[Check]:
        if self._who is not None:
            try:
                user = await self._who()
            except Exception as exc:  # whatever it was, the full essential check below says why
                logger.debug("Nextcloud check at start: who-am-I failed: %s", type(exc).__name__)
            else:
                return [Check("credentials", "ok", f"logged in as '{user}'")]
        return await run_checks(self.settings, essential=True)

    async def words_for_a_failure(self) -> str | None:
        """What the check found wrong, once: for the first tool call that fails afterwards (a
        check still running is waited for, within its own bound)."""
        if self._task is not None and not self._task.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(self._task)
        problem, self.problem = self.problem, None
        return problem

    def nextcloud_answered(self) -> None:
        """A call succeeded: whatever the check found at start is over."""
        self.problem = None

    async def aclose(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
