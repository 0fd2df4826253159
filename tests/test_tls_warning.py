"""NEXTCLOUD_VERIFY_TLS=false is said out loud (issue 31, finding 15): `check` warns, and so does
the log of a starting server."""

from __future__ import annotations

import logging

import pytest

from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.diagnostics import format_report, run_checks
from nextcloud_mcp_server.runtime import Runtime
from tests.conftest import ADMIN_APP_PASSWORD


def configured(double_url: str, verify: bool) -> Settings:
    return load_settings(
        env_file=None,
        nextcloud_host=double_url,
        nextcloud_username="admin",
        nextcloud_password=ADMIN_APP_PASSWORD,
        nextcloud_verify_tls=verify,
    )


async def test_check_warns_when_tls_is_not_verified(double_url: str) -> None:
    off = configured(double_url, verify=False)
    results = await run_checks(off)
    report = format_report(off, results)
    [tls] = [c for c in results if c.name == "tls"]
    assert tls.status == "warn"
    assert "NEXTCLOUD_VERIFY_TLS=false" in tls.detail
    assert "NEXTCLOUD_CA_BUNDLE" in tls.detail
    assert "Result: ready (1 warning(s))" in report
    assert not [c for c in await run_checks(configured(double_url, verify=True)) if c.name == "tls"]


def test_the_server_log_warns_when_tls_is_not_verified(
    double_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="nextcloud_mcp_server")
    Runtime(configured(double_url, verify=True))
    assert "NEXTCLOUD_VERIFY_TLS" not in caplog.text
    Runtime(configured(double_url, verify=False))
    [record] = [r for r in caplog.records if "NEXTCLOUD_VERIFY_TLS=false" in r.getMessage()]
    assert record.levelno == logging.WARNING
