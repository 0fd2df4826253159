"""Liveness and readiness over HTTP, as Docker's HEALTHCHECK and orchestrators see them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.web.health import _store
from tests.mcp_clients import running_app
from tests.nextcloud_double import NextcloudDouble
from tests.offline import offline_server
from tests.oidc import IdP
from tests.processes import free_port

pytestmark = pytest.mark.integration


def test_ready_when_nextcloud_answers_and_live_regardless(
    settings: Settings, double: NextcloudDouble
) -> None:
    uncached = settings.model_copy(update={"health_check_cache_seconds": 0})
    with running_app(uncached) as base:
        ready = httpx.get(f"{base}/health/ready", timeout=10)
        double.inject("GET", "/status.php", 503, 503, 503)
        not_ready = httpx.get(f"{base}/health/ready", timeout=10)
        live = httpx.get(f"{base}/health", timeout=10)
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": {"nextcloud": "ok"}}
    assert not_ready.status_code == 503
    assert not_ready.json() == {"status": "not ready", "checks": {"nextcloud": "failed"}}
    assert live.status_code == 200
    assert live.json()["status"] == "ok"


def test_not_ready_when_nextcloud_is_unreachable(settings: Settings) -> None:
    elsewhere = settings.model_copy(update={"nextcloud_host": f"http://127.0.0.1:{free_port()}"})
    with running_app(elsewhere) as base:
        answer = httpx.get(f"{base}/health/ready", timeout=15)
    assert answer.status_code == 503
    assert answer.json()["checks"]["nextcloud"] == "failed"


def test_readiness_shows_strangers_nothing_of_nextcloud_and_asks_it_once(
    settings: Settings, double: NextcloudDouble, double_url: str
) -> None:
    """Issue 13: unauthenticated /health/ready showed Nextcloud's version and internal address and
    made a Nextcloud request per hit."""
    with running_app(settings.model_copy(update={"health_check_cache_seconds": 300})) as base:
        # the check at start asks Nextcloud too (status.php, then the user): let it finish first
        deadline = time.monotonic() + 30
        while not any(r.path.endswith("/cloud/user") for r in list(double.requests)):
            assert time.monotonic() < deadline, "the check at start never asked for the user"
            time.sleep(0.05)
        before = sum(r.path == "/status.php" for r in list(double.requests))
        answers = [httpx.get(f"{base}/health/ready", timeout=10) for _ in range(20)]
    asked = sum(r.path == "/status.php" for r in list(double.requests)) - before
    assert {a.status_code for a in answers} == {200}
    assert asked == 1
    for answer in answers:
        assert "29." not in answer.text
        assert double_url.split("://")[1] not in answer.text
        assert "Nextcloud" not in answer.text


def test_offline_access_readiness_includes_the_store(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    with offline_server(double, double_url, idp, tmp_path / "store.sqlite3") as server:
        answer = httpx.get(f"{server.base}/health/ready", timeout=10)
    assert answer.status_code == 200
    assert answer.json()["checks"]["store"] == "ok"


async def test_a_store_that_cannot_answer_is_reported() -> None:
    class BrokenStore:
        async def ping(self) -> None:
            raise OSError("disk I/O error")

    class Runtime:
        store: Any = BrokenStore()

    assert await _store(Runtime()) == "disk I/O error"
