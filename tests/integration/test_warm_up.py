"""A new stdio process does its first call's groundwork right after the handshake (issue 44,
docs/ADR/0090): the imports, then who the user is (`cloud/user`, once). A host's first call a
moment later asks Nextcloud only what its own answer needs, and answers as it did before."""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import pytest

from nextcloud_mcp_server.runtime.warm_up import FIRST_CALL_MODULES, WarmUp, modules_for
from tests.conftest import ADMIN_APP_PASSWORD
from tests.mcp_clients import stdio_session, structured
from tests.nextcloud_double.app import NextcloudDouble

pytestmark = pytest.mark.integration

WHO = ("GET", "/ocs/v2.php/cloud/user")


def _env(url: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    return {
        **base,
        "NEXTCLOUD_HOST": url,
        "NEXTCLOUD_USERNAME": "admin",
        "NEXTCLOUD_PASSWORD": ADMIN_APP_PASSWORD,
    }


def _plan(double: NextcloudDouble) -> None:
    folder = double.user_files("admin") / "Projects"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plan.txt").write_bytes(b"beans")


def _asked(double: NextcloudDouble, since: int) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in list(double.requests)[since:]]


async def test_a_first_call_after_the_handshake_finds_the_user_known(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    _plan(double)
    before = len(double.requests)
    async with stdio_session(_env(double_url), cwd=tmp_path) as session:
        await session.list_tools()
        deadline = time.monotonic() + 30
        while WHO not in _asked(double, before):  # the warm-up's discovery, before any call
            assert time.monotonic() < deadline, _asked(double, before)
            await session.send_ping()
        at_call = len(double.requests)
        listing = structured(await session.call_tool("nc_webdav_list_directory", {"path": "Projects"}))
        during = _asked(double, at_call)
    assert [e["name"] for e in listing["entries"]] == ["plan.txt"]
    assert during == [("PROPFIND", "/remote.php/dav/files/admin/Projects")]  # only what it needs
    assert _asked(double, before).count(WHO) == 1


async def test_a_call_made_at_once_shares_the_warm_ups_discovery(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    _plan(double)
    before = len(double.requests)
    async with stdio_session(_env(double_url), cwd=tmp_path) as session:
        listing = structured(await session.call_tool("nc_webdav_list_directory", {"path": "Projects"}))
        await session.list_tools()
        deadline = time.monotonic() + 30
        while not any(path == "/remote.php/dav/files/admin/Projects" for _, path in _asked(double, before)):
            assert time.monotonic() < deadline
            await session.send_ping()
        asked = _asked(double, before)
    assert [e["name"] for e in listing["entries"]] == ["plan.txt"]
    assert asked.count(WHO) == 1
    assert ("GET", "/status.php") not in asked


def test_the_warm_up_imports_what_each_chosen_toolset_first_needs() -> None:
    assert modules_for({"calendar", "contacts"})[:4] == list(FIRST_CALL_MODULES[""])
    assert "vobject" in modules_for({"contacts"})
    assert "vobject" not in modules_for({"notes", "files"})
    assert "nextcloud_mcp_server.nextcloud.dav.recurrence" in modules_for({"calendar"})
    wanted = modules_for({"notes", "files", "calendar", "contacts"})
    assert len(wanted) == len(set(wanted))
    for name in wanted:  # every name is importable: a typo would leave the work to the first call
        __import__(name)


async def test_what_the_warm_up_imported_is_taken_out_of_the_collectors_sight() -> None:
    """The modules and tools the warm-up made live as long as the process, as startup's do: they
    are frozen once it is over, so a first call's collections do not walk them (ADR 0113)."""
    built: list[object] = []
    warm = WarmUp(["json.tool"], check=None, build=lambda: built.append([{"made": "by the build"}]))
    before = gc.get_freeze_count()
    try:
        warm.start()
        assert warm.task is not None
        await warm.task
        assert built
        assert gc.get_freeze_count() > before
        assert not any(o is built for o in gc.get_objects())  # frozen: out of every generation
    finally:
        gc.unfreeze()
