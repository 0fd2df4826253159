"""Nextcloud's known refusals, in words that say what to do, in tools and in `check` alike
(issue 33): a disabled Notes app, a file written into a folder that does not exist, a host name
Nextcloud does not trust, a name Nextcloud forbids. Against the double and the real Nextcloud."""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.diagnostics import run_checks
from nextcloud_mcp_server.nextcloud.errors import UntrustedDomain
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app

pytestmark = pytest.mark.integration


def _text(result: object) -> str:
    return " ".join(getattr(c, "text", "") for c in getattr(result, "content", []))


def _settings(nextcloud: Nextcloud, host: str | None = None) -> object:
    return load_settings(
        env_file=None,
        nextcloud_host=host or nextcloud.url,
        nextcloud_username=nextcloud.admin.user,
        nextcloud_password=nextcloud.admin.app_password,
    )


def _disable_notes(nextcloud: Nextcloud) -> None:
    if nextcloud.double is not None:
        nextcloud.double.notes_enabled = False
    else:  # through Nextcloud's own API (php-fpm caches what occ changes for a while), with the
        # login password: 34 asks an app password to confirm the password for this
        with httpx.Client(
            base_url=nextcloud.url, auth=(nextcloud.admin.user, nextcloud.admin.password)
        ) as admin:
            disabled = admin.delete(
                "/ocs/v2.php/cloud/apps/notes",
                headers={"OCS-APIRequest": "true", "Accept": "application/json"},
            )
        assert disabled.status_code == 200, disabled.text


async def test_a_disabled_notes_app_is_named_by_the_tool(nextcloud: Nextcloud) -> None:
    _disable_notes(nextcloud)
    with running_app(_settings(nextcloud)) as url:  # type: ignore[arg-type]
        async with http_session(url + "/mcp") as session:
            result = await session.call_tool("nc_notes_list_notes", {})
    assert result.is_error
    assert "the Notes app is not installed or not enabled" in _text(result)
    assert "occ app:enable notes" in _text(result)


async def test_writing_into_a_missing_folder_names_create_parents(nextcloud: Nextcloud) -> None:
    with running_app(_settings(nextcloud)) as url:  # type: ignore[arg-type]
        async with http_session(url + "/mcp") as session:
            refused = await session.call_tool(
                "nc_webdav_write_file", {"path": "Nowhere/x.txt", "content": "x"}
            )
            listing = await session.call_tool("nc_webdav_list_directory", {"path": ""})
    assert refused.is_error
    assert "the folder /Nowhere does not exist (pass create_parents=true)" in _text(refused)
    assert "Nowhere" not in _text(listing)


async def test_an_untrusted_host_name_is_named_in_requests_and_in_check(
    nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`untrusted.test` (resolved to 127.0.0.1 here) reaches the same server under a name its
    trusted_domains do not list."""
    if nextcloud.double is not None:
        nextcloud.double.trusted_domains = ("127.0.0.1", "localhost")
    resolve = socket.getaddrinfo

    def with_test_name(host: object, *args: Any, **kwargs: Any) -> Any:
        return resolve("127.0.0.1" if host == "untrusted.test" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", with_test_name)
    port = urlsplit(nextcloud.url).port
    host = f"http://untrusted.test:{port}"
    http = NextcloudHTTP(host, max_retries=0)
    try:
        with pytest.raises(UntrustedDomain, match=r"untrusted\.test \(it is not in its trusted_domains\)"):
            await http.request("GET", "/ocs/v2.php/cloud/user", credential=None)
    finally:
        await http.aclose()
    checks = await run_checks(_settings(nextcloud, host))  # type: ignore[arg-type]
    reachable = next(c for c in checks if c.name == "reachable")
    assert reachable.status == "fail"
    assert "adds untrusted.test to 'trusted_domains'" in reachable.detail
