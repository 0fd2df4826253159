"""What `enabled_apps` reads from the real Nextcloud 29 and 34: the app toolsets' apps where they
are installed, the core ones everywhere, and a disabled app gone (docs/ADR/0042-toolsets-by-app.md)."""

from __future__ import annotations

import time

from nextcloud_mcp_server.nextcloud.apps import enabled_apps
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from tests.backends import Nextcloud

APPS = {"deck", "spreed", "tables", "collectives"}
CORE = {"files_trashbin", "files_versions", "systemtags", "comments"}


async def _apps(nextcloud: Nextcloud) -> frozenset[str]:
    http = NextcloudHTTP(nextcloud.url, max_retries=0)
    try:
        login = nextcloud.alice
        return await enabled_apps(OCSClient(http, BasicCredential(login.user, login.app_password)))
    finally:
        await http.aclose()


async def test_the_apps_instances_show_every_app(apps_nextcloud: Nextcloud) -> None:
    found = await _apps(apps_nextcloud)
    assert found >= (APPS | CORE | {"mail", "user_status"})
    # Activity and Notifications ship with 34; 29's kit has neither
    assert (
        {"activity", "notifications"} <= found
        if apps_nextcloud.major >= 34
        else not {"activity", "notifications"} & found
    )


async def test_the_plain_instances_show_the_core_apps_only(each_real_nextcloud: Nextcloud) -> None:
    found = await _apps(each_real_nextcloud)
    assert found >= CORE
    assert not APPS & found


async def test_disabled_core_apps_are_gone(each_real_nextcloud: Nextcloud) -> None:
    assert each_real_nextcloud.instance is not None
    for app in sorted(CORE):
        each_real_nextcloud.instance.occ("app:disable", app)
    deadline = time.monotonic() + 30  # Nextcloud 34 keeps enabled apps in APCu for a moment
    while CORE & await _apps(each_real_nextcloud):
        assert time.monotonic() < deadline, await _apps(each_real_nextcloud)
