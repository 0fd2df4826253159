"""Health endpoints for orchestrators (Docker's HEALTHCHECK, Kubernetes probes, load balancers).

- `GET /health`: liveness. The process serves HTTP; nothing else is touched, so it stays cheap
  and never fails because Nextcloud is down (restarting us would not help).
- `GET /health/ready`: readiness. The store answers (offline access) and Nextcloud answers
  `/status.php` as installed and not in maintenance, each within a few seconds. Anyone can ask, so
  the answer only says which check failed: what was seen (Nextcloud's version, its address, the
  error) goes to the log. Nextcloud's answer is reused for HEALTH_CHECK_CACHE_SECONDS and
  concurrent probes share one request, so probing this route cannot load Nextcloud.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from nextcloud_mcp_server import __version__

__all__ = ["health_routes"]

logger = logging.getLogger(__name__)

STORE_TIMEOUT = 2.0
NEXTCLOUD_TIMEOUT = 5.0


async def _live(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok", "version": __version__})


async def _store(runtime: Any) -> str | None:
    """None when the store answers; else what went wrong."""
    try:
        await asyncio.wait_for(runtime.store.ping(), STORE_TIMEOUT)
    except TimeoutError:
        return f"no answer within {STORE_TIMEOUT:.0f} s"
    except Exception as exc:
        return str(exc) or type(exc).__name__
    return None


async def _nextcloud(runtime: Any) -> tuple[str | None, str]:
    """(problem or None, what was seen)."""
    from nextcloud_mcp_server.nextcloud.errors import NextcloudError
    from nextcloud_mcp_server.nextcloud.ocs import OCSClient

    try:
        status = await asyncio.wait_for(OCSClient(runtime.http, None).status(), NEXTCLOUD_TIMEOUT)
    except TimeoutError:
        return f"no answer within {NEXTCLOUD_TIMEOUT:.0f} s", ""
    except NextcloudError as exc:
        return str(exc), ""
    seen = f"{status.productname} {status.versionstring}".strip()
    if not status.installed:
        return "Nextcloud is not installed yet", seen
    if status.maintenance:
        return "Nextcloud is in maintenance mode", seen
    if status.needs_db_upgrade:
        return "Nextcloud needs a database upgrade (occ upgrade)", seen
    return None, seen


class _CachedCheck:
    """Nextcloud's readiness, asked at most once per `ttl` seconds, one request at a time."""

    def __init__(self, runtime: Any, ttl: float) -> None:
        self.runtime, self.ttl = runtime, ttl
        self._lock = asyncio.Lock()
        self._until = 0.0
        self._problem: str | None = None

    async def problem(self) -> str | None:
        async with self._lock:
            if time.monotonic() >= self._until:
                problem, seen = await _nextcloud(self.runtime)
                if problem is not None:
                    logger.warning("readiness: Nextcloud %s", problem)
                else:
                    logger.debug("readiness: %s answers", seen)
                self._problem, self._until = problem, time.monotonic() + self.ttl
            return self._problem


def health_routes(runtime: Any) -> list[Route]:
    nextcloud = _CachedCheck(runtime, runtime.settings.health_check_cache_seconds)

    async def ready(request: Request) -> JSONResponse:
        checks: dict[str, str] = {}
        if runtime.store is not None:
            problem = await _store(runtime)
            if problem is not None:
                logger.warning("readiness: the store %s", problem)
            checks["store"] = "failed" if problem else "ok"
        checks["nextcloud"] = "failed" if await nextcloud.problem() else "ok"
        failed = "failed" in checks.values()
        body = {"status": "not ready" if failed else "ready", "checks": checks}
        return JSONResponse(body, status_code=503 if failed else 200, headers={"Cache-Control": "no-store"})

    return [Route("/health", _live, methods=["GET"]), Route("/health/ready", ready, methods=["GET"])]
