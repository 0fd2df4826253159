"""The approval race suite (see test_approval_races.py) for sharing, version restore and
Collectives pages, on the real Nextcloud 29 and 34 (Collectives: 34; 29's Collectives 2.x is
refused as too old): while the person is asked, the file or folder is renamed and another put in
its place, rewritten with the same size and time, or the share itself is changed; nothing is
shared, restored, removed or replaced."""

from __future__ import annotations

from typing import Any

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human, structured
from tests.security.test_bound_to_content import (
    COLLECTIVES,
    _rewrite_keeping_size_and_time,
    error_text,
    session_of,
)
from tests.security.test_publishing import SHARES, ocs

CHANGED = "changed while you were being asked"


def _move(nc: Nextcloud, source: str, destination: str) -> None:
    with nc.http(nc.alice) as client:
        moved = client.request(
            "MOVE",
            nc.dav_path(nc.alice, source),
            headers={"Destination": nc.url + nc.dav_path(nc.alice, destination)},
        )
    assert moved.status_code in (201, 204), moved.status_code


def _my_shares(nc: Nextcloud) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ocs(nc, nc.alice, "GET", SHARES)
    return found


@pytest.mark.parametrize("change", ["another file put in its place", "edited keeping size and time"])
async def test_a_file_is_not_shared_after_a_change_while_asked(
    each_real_nextcloud: Nextcloud, change: str
) -> None:
    nc = each_real_nextcloud
    nc.put_file(nc.alice, "q3.txt", b"pin=4711")

    async def race() -> None:
        if change == "another file put in its place":
            _move(nc, "q3.txt", "q3-kept.txt")
            nc.put_file(nc.alice, "q3.txt", b"salaries of everyone")
        else:
            _rewrite_keeping_size_and_time(nc, nc.alice, "q3.txt", b"pin=****")

    human = Human(while_asked=race)
    async with session_of(nc, nc.alice, human, nextcloud_mcp_toolsets="sharing") as session:
        refused = await session.call_tool("nc_share_create", {"path": "q3.txt", "kind": "link"})
    assert CHANGED in error_text(refused)
    assert len(human.questions) == 1
    assert _my_shares(nc) == []


def _user_share(nc: Nextcloud) -> str:
    nc.make_folder(nc.alice, "Team")
    made = ocs(
        nc,
        nc.alice,
        "POST",
        SHARES,
        data={"path": "/Team", "shareType": 0, "shareWith": "admin", "permissions": 1},
    )
    return str(made["id"])


@pytest.mark.parametrize("tool", ["nc_share_update", "nc_share_delete"])
@pytest.mark.parametrize("change", ["its rights changed", "the folder renamed"])
async def test_a_share_is_not_changed_or_removed_after_a_change_while_asked(
    each_real_nextcloud: Nextcloud, tool: str, change: str
) -> None:
    nc = each_real_nextcloud
    share_id = _user_share(nc)

    async def race() -> None:
        if change == "its rights changed":
            ocs(nc, nc.alice, "PUT", f"{SHARES}/{share_id}", data={"permissions": 3})
        else:
            _move(nc, "Team", "Team (old)")

    arguments: dict[str, Any] = {"share_id": share_id}
    if tool == "nc_share_update":
        arguments["rights"] = "edit"  # more rights: asks
    human = Human(while_asked=race)
    async with session_of(nc, nc.alice, human, nextcloud_mcp_toolsets="sharing") as session:
        refused = await session.call_tool(tool, arguments)
    assert CHANGED in error_text(refused)
    assert len(human.questions) == 1
    [share] = _my_shares(nc)
    expected = 3 if change == "its rights changed" else 1  # the other client's change, kept as made
    assert (str(share["id"]), int(share["permissions"])) == (share_id, expected)


@pytest.mark.parametrize("change", ["renamed", "another file put in its place"])
async def test_a_version_is_not_restored_after_a_rename_while_asked(
    each_real_nextcloud: Nextcloud, change: str
) -> None:
    nc = each_real_nextcloud
    nc.put_file(nc.alice, "plan.txt", b"old plan")
    nc.put_new_version(nc.alice, "plan.txt", b"new plan, longer")
    async with session_of(nc, nc.alice, nextcloud_mcp_toolsets="versions") as session:
        listed = structured(await session.call_tool("nc_versions_list", {"path": "plan.txt"}))
    older = next(v["version"] for v in listed["versions"] if not v["current"])

    async def race() -> None:
        _move(nc, "plan.txt", "plan (final).txt")
        if change == "another file put in its place":
            nc.put_file(nc.alice, "plan.txt", b"someone else's plan")

    human = Human(while_asked=race)
    async with session_of(nc, nc.alice, human, nextcloud_mcp_toolsets="versions") as session:
        refused = await session.call_tool("nc_versions_restore", {"path": "plan.txt", "version": older})
    assert refused.is_error
    assert CHANGED in error_text(refused)
    assert nc.read_file(nc.alice, "plan (final).txt") == b"new plan, longer"
    replaced = change == "another file put in its place"
    assert nc.read_file(nc.alice, "plan.txt") == (b"someone else's plan" if replaced else None)


@pytest.mark.parametrize("change", ["edited keeping size and time", "edited"])
async def test_a_collectives_page_is_not_cut_after_an_edit_while_asked(
    apps_nextcloud: Nextcloud, change: str
) -> None:
    nc = apps_nextcloud
    settings: dict[str, Any] = {"nextcloud_mcp_toolsets": "collectives"}
    if nc.major < 30:  # Collectives 2.x: every tool says it is too old, nothing is written
        async with session_of(nc, nc.alice, **settings) as session:
            too_old = await session.call_tool("nc_collectives_list_collectives", {})
        assert "Collectives cannot be used on this Nextcloud 29" in error_text(too_old)
        return
    with nc.http(nc.alice) as http:
        made = http.post(COLLECTIVES, params={"format": "json"}, json={"name": "Wiki"}).json()["ocs"]["data"]
        wiki = made["collective"]["id"]
        pages = http.get(f"{COLLECTIVES}/{wiki}/pages", params={"format": "json"}).json()["ocs"]["data"]
    [landing] = pages["pages"]
    path = ".Collectives/Wiki/Readme.md"
    shown = b"# Handbook\n" + b"the door code is 4711. " * 20
    nc.put_file(nc.alice, path, shown)
    other = shown.replace(b"4711", b"8080") if change.endswith("time") else shown + b"and more"

    async def race() -> None:
        if change.endswith("time"):
            _rewrite_keeping_size_and_time(nc, nc.alice, path, other, etag_kept=False)
        else:
            nc.put_new_version(nc.alice, path, other)

    arguments = {
        "collective_id": wiki,
        "page_id": landing["id"],
        "content": "gone",
        "etag": nc.etag(nc.alice, path),
    }
    human = Human(while_asked=race)
    async with session_of(nc, nc.alice, human, **settings) as session:
        refused = await session.call_tool("nc_collectives_edit_page", arguments)
    assert CHANGED in error_text(refused)
    assert len(human.questions) == 1
    assert nc.read_file(nc.alice, path) == other
