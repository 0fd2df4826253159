"""What the human approved is what happens, bound to content rather than to times a client sets
(ADR 0057, 0059, 0060), on the real Nextcloud 29 and 34: a Tables row changed in the same second
while asked; a file rewritten with the same size and `X-OC-Mtime` while asked (delete and version
restore); kept note texts after such a rewrite; a 3 MB Collectives page cut at level write; and
NEXTCLOUD_MCP_TOOLSETS bounding resources and completions."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from email.utils import parsedate_to_datetime
from typing import Any

import pytest
from mcp import ClientSession
from mcp.types import ResourceTemplateReference

from tests.backends import Login, Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured

TABLES = "/index.php/apps/tables/api/1"
COLLECTIVES = "/ocs/v2.php/apps/collectives/api/v1.0/collectives"


@asynccontextmanager
async def session_of(
    nextcloud: Nextcloud, login: Login, human: Human | None = None, **settings: Any
) -> AsyncIterator[ClientSession]:
    config = nextcloud.settings(login, **settings)
    with running_app(config) as base:
        if human is None:
            async with http_session(f"{base}/mcp") as session:
                yield session
        else:
            async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
                yield session


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return " ".join(getattr(block, "text", "") for block in result.content)


def _tables(nc: Nextcloud, method: str, path: str, body: Any = None) -> Any:
    with nc.http(nc.alice) as http:
        answer = http.request(method, f"{TABLES}{path}", json=body, headers={"Accept": "application/json"})
    assert answer.status_code == 200, (method, path, answer.status_code, answer.text[:300])
    return answer.json()


_SQL = (
    "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute(sys.argv[2], sys.argv[3:]); "
    "db.commit()"
)


def _as_nextcloud(nc: Nextcloud, statement: str, *values: object) -> None:
    """One statement on the instance's SQLite database, as the user Nextcloud runs as (so any
    file SQLite creates beside it stays Nextcloud's)."""
    assert nc.instance is not None
    database = str(nc.instance.dir / "data" / "owncloud.db")
    command = ["runuser", "-u", "www-data", "--", "/usr/bin/python3", "-c", _SQL, database, statement]
    subprocess.run([*command, *map(str, values)], check=True, timeout=60)


async def test_a_row_changed_in_the_same_second_while_asked_is_not_deleted(apps_nextcloud: Nextcloud) -> None:
    """Finding 4: a row's version is its last change to the second and its last editor. A change
    falls in the same second only by chance (3 of 5 runs on an idle machine, none on a loaded
    one), so the other client's change is made through Tables' API and its time then put back in
    Nextcloud's own database: the change in the same second, every run."""
    nc = apps_nextcloud
    assert nc.instance is not None
    table = _tables(nc, "POST", "/tables", {"title": "Payroll"})["id"]
    column = {"title": "Name", "type": "text", "subtype": "line", "mandatory": False}
    if nc.major >= 34:
        column["baseNodeType"] = "table"
    name = _tables(nc, "POST", f"/tables/{table}/columns", column)["id"]
    row = _tables(nc, "POST", f"/tables/{table}/rows", {"data": {str(name): "Eve"}})["id"]

    async def edited() -> None:
        before = _tables(nc, "GET", f"/rows/{row}")["lastEditAt"]
        _tables(nc, "PUT", f"/rows/{row}", {"data": {str(name): "Eve (promoted)"}})
        _as_nextcloud(nc, "UPDATE oc_tables_row_sleeves SET last_edit_at = ? WHERE id = ?", before, row)
        assert _tables(nc, "GET", f"/rows/{row}")["lastEditAt"] == before  # the premise

    human = Human(while_asked=edited)
    async with session_of(nc, nc.alice, human, nextcloud_mcp_toolsets="tables") as session:
        refused = await session.call_tool("nc_tables_delete_row", {"row_id": row})
    assert "changed while you were being asked" in error_text(refused)
    cells = {c["columnId"]: c["value"] for c in _tables(nc, "GET", f"/rows/{row}")["data"]}
    assert cells[name] == "Eve (promoted)"


def _mtime(nc: Nextcloud, login: Login, path: str) -> int:
    with nc.http(login) as client:
        got = client.request("PROPFIND", nc.dav_path(login, path), headers={"Depth": "0"})
    found = re.search(r"<d:getlastmodified>([^<]+)<", got.text)
    assert found, got.text[:300]
    return int(parsedate_to_datetime(found.group(1)).timestamp())


def _rewrite_keeping_size_and_time(
    nc: Nextcloud, login: Login, path: str, data: bytes, *, etag_kept: bool = True
) -> None:
    """Another client writes other content of the same size with the old time (`X-OC-Mtime`),
    as a sync client that preserves times does; Nextcloud keeps the ETag (checked unless
    `etag_kept` is False: Collectives 34 may touch a page's file after a write, so there the
    rewrite is a plain edit and the refusal must hold either way)."""
    before, mtime = nc.etag(login, path), _mtime(nc, login, path)
    with nc.http(login) as client:
        answer = client.put(nc.dav_path(login, path), content=data, headers={"X-OC-Mtime": str(mtime)})
    assert answer.status_code in (201, 204)
    if etag_kept:
        assert nc.etag(login, path) == before  # the premise: the ETag alone cannot tell


@pytest.mark.parametrize("tool", ["nc_webdav_delete_resource", "nc_versions_restore"])
async def test_a_file_rewritten_with_the_same_size_and_time_while_asked_is_left_alone(
    each_real_nextcloud: Nextcloud, tool: str
) -> None:
    """Finding 5: the binding was (ETag, size, mtime, file id), all of which a client sets."""
    nc = each_real_nextcloud
    nc.put_file(nc.admin, "payroll.txt", b"pin=4711")
    arguments: dict[str, Any] = {"path": "payroll.txt"}
    if tool == "nc_versions_restore":
        nc.put_new_version(nc.admin, "payroll.txt", b"pin=4712")
        async with session_of(nc, nc.admin, nextcloud_mcp_toolsets="versions") as session:
            listed = structured(await session.call_tool("nc_versions_list", {"path": "payroll.txt"}))
        arguments["version"] = next(v["version"] for v in listed["versions"] if not v["current"])

    async def rewritten() -> None:
        _rewrite_keeping_size_and_time(nc, nc.admin, "payroll.txt", b"pin=****")

    human = Human(while_asked=rewritten)
    toolsets = "files" if tool == "nc_webdav_delete_resource" else "versions"
    async with session_of(nc, nc.admin, human, nextcloud_mcp_toolsets=toolsets) as session:
        refused = await session.call_tool(tool, arguments)
    assert "changed while you were being asked" in error_text(refused)
    assert nc.read_file(nc.admin, "payroll.txt") == b"pin=****"


async def test_a_kept_note_text_rewritten_with_the_same_size_and_time_is_not_quoted(
    each_real_nextcloud: Nextcloud,
) -> None:
    """Finding 6: kept texts were revalidated by each note's ETag, which follows the client's
    mtime."""
    nc = each_real_nextcloud
    note = nc.add_note(title="Bank", content="pin=4711")
    path = next(p for p in (f"Notes/Bank.{ext}" for ext in ("md", "txt")) if nc.exists(nc.admin, p))
    with nc.http(nc.admin) as client:  # last changed an hour ago, as a sync client may say
        old = str(int(time.time()) - 3600)
        assert client.put(nc.dav_path(nc.admin, path), content=b"pin=4711", headers={"X-OC-Mtime": old})
    async with session_of(nc, nc.admin, nextcloud_mcp_toolsets="notes") as session:
        found = structured(await session.call_tool("nc_notes_search_notes", {"query": "4711"}))
        assert [hit["id"] for hit in found["hits"]] == [note["id"]]
        _rewrite_keeping_size_and_time(nc, nc.admin, path, b"pin=****")
        again = structured(await session.call_tool("nc_notes_search_notes", {"query": "4711"}))
        assert again["hits"] == []
        masked = structured(await session.call_tool("nc_notes_search_notes", {"query": "pin"}))
    assert "pin=****" in masked["hits"][0]["snippet"]


async def test_a_page_longer_than_was_read_is_compared_whole(apps_nextcloud: Nextcloud) -> None:
    """Finding 8: a 3 MB page replaced by 0.6 MB at level `write` (which never removes)."""
    nc = apps_nextcloud
    settings: dict[str, Any] = {"nextcloud_mcp_toolsets": "collectives", "nextcloud_mcp_permissions": "write"}
    if nc.major < 30:  # Collectives 2.x: every tool says it is too old, nothing is written
        async with session_of(nc, nc.alice, **settings) as session:
            too_old = await session.call_tool("nc_collectives_list_collectives", {})
        assert "Collectives cannot be used on this Nextcloud 29" in error_text(too_old)
        return
    with nc.http(nc.alice) as http:
        made = http.post(COLLECTIVES, params={"format": "json"}, json={"name": "Wiki"}).json()["ocs"]["data"]
        wiki = made["collective"]["id"]
        [landing] = http.get(f"{COLLECTIVES}/{wiki}/pages", params={"format": "json"}).json()["ocs"]["data"][
            "pages"
        ]
    path = ".Collectives/Wiki/Readme.md"
    long_page = ("# Handbook\n" + "a paragraph of the handbook. " * 110_000).encode()
    assert len(long_page) > 3_000_000
    nc.put_file(nc.alice, path, long_page)
    arguments = {"collective_id": wiki, "page_id": landing["id"], "content": "short " * 100_000}
    async with session_of(nc, nc.alice, **settings) as session:
        arguments["etag"] = nc.etag(nc.alice, path)
        refused = await session.call_tool("nc_collectives_edit_page", arguments)
    assert "never to remove or overwrite" in error_text(refused)
    assert nc.read_file(nc.alice, path) == long_page


async def test_the_chosen_toolsets_bound_resources_listings_and_completions(nextcloud: Nextcloud) -> None:
    """Finding 7: with NEXTCLOUD_MCP_TOOLSETS=deck, files, notes and calendar days were still
    read, listed and completed."""
    nc = nextcloud
    nc.put_file(nc.admin, "payroll.txt", b"salaries")
    nc.add_note(title="Diary", content="private")
    async with session_of(nc, nc.admin, nextcloud_mcp_toolsets="deck") as session:
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates if t.uri_template.startswith("nextcloud://")] == []
        listed = (await session.list_resources()).resources
        assert [str(r.uri) for r in listed if str(r.uri).startswith("nextcloud://")] == []
        with pytest.raises(Exception, match="unknown resource"):
            await session.read_resource("nextcloud://files/payroll.txt")
        completed = await session.complete(
            ResourceTemplateReference(type="ref/resource", uri="nextcloud://files/{+path}"),
            {"name": "path", "value": "pay"},
        )
        assert completed.completion.values == []
    async with session_of(nc, nc.admin, nextcloud_mcp_toolsets="files") as session:
        kept = await session.read_resource("nextcloud://files/payroll.txt")  # the same server, files chosen
        assert "salaries" in str(kept.contents[0])
        completed = await session.complete(
            ResourceTemplateReference(type="ref/resource", uri="nextcloud://files/{+path}"),
            {"name": "path", "value": "pay"},
        )
        assert completed.completion.values == ["payroll.txt"]
        listed = (await session.list_resources()).resources
        assert [
            str(r.uri) for r in listed if str(r.uri).startswith("nextcloud://")
        ] == []  # no notes, no days
