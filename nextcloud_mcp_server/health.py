"""Health endpoints for orchestrators (Docker's HEALTHCHECK, Kubernetes probes, load balancers).

- `GET /health`: liveness. The process serves HTTP; nothing else is touched, so it stays cheap
  and never fails because Nextcloud is down (restarting us would not help).
- `GET /health/ready`: readiness. The store answers (offline access) and Nextcloud answers
  `/status.php` as installed and not in maintenance, each within a few seconds. 503 names what
  failed; no credentials are used and nothing secret is shown.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from nextcloud_mcp_server import __version__

__all__ = ["health_routes"]

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


def health_routes(runtime: Any) -> list[Route]:
    async def ready(request: Request) -> JSONResponse:
        checks: dict[str, str] = {}
        failed = False
        if runtime.store is not None:
            problem = await _store(runtime)
            checks["store"] = f"failed: {problem}" if problem else "ok"
            failed |= problem is not None
        problem, seen = await _nextcloud(runtime)
        checks["nextcloud"] = f"failed: {problem}" if problem else f"ok ({seen})"
        failed |= problem is not None
        body = {"status": "not ready" if failed else "ready", "version": __version__, "checks": checks}
        return JSONResponse(body, status_code=503 if failed else 200, headers={"Cache-Control": "no-store"})

    return [Route("/health", _live, methods=["GET"]), Route("/health/ready", ready, methods=["GET"])]
