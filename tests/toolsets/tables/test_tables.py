"""The tables toolset end to end: the SDK's client, the server, and the real Nextcloud 29 (Tables
0.9.11) and 34 (Tables 2.2.2). Tables, columns and views are made through Tables' own REST API in
each test, and every change the tools make is checked there too."""

from __future__ import annotations

import json
import time
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx
import pytest
from mcp import ClientSession

from nextcloud_mcp_server.toolsets.tables import tools as tables_tools
from tests.backends import Nextcloud
from tests.mcp_clients import Human, structured, toolset_session
from tests.strict_clients import refusal_details
from tests.toolsets.tables.trip_table import COLUMNS

pytestmark = pytest.mark.integration

API = "/index.php/apps/tables/api/1"
TOOLS = {
    "nc_tables_list_tables": ("tables:read", True, False),
    "nc_tables_get_columns": ("tables:read", True, False),
    "nc_tables_read_rows": ("tables:read", True, False),
    "nc_tables_add_row": ("tables:write", False, False),
    "nc_tables_update_row": ("tables:write", False, False),
    "nc_tables_delete_row": ("tables:write", False, True),
    "nc_tables_create_table": ("tables:write", False, False),
    "nc_tables_add_column": ("tables:write", False, False),
}


def _api(nextcloud: Nextcloud, method: str, path: str, body: Any = None) -> Any:
    with nextcloud.http(nextcloud.alice) as http:
        answer = http.request(method, f"{API}{path}", json=body, headers={"Accept": "application/json"})
    assert answer.status_code == 200, (method, path, answer.status_code, answer.text[:300])
    return answer.json()


def _trip(nextcloud: Nextcloud) -> dict[str, int]:
    """A table "Trip" of alice's with one column of each kind; {title: column id, "table": id}."""
    table = _api(nextcloud, "POST", "/tables", {"title": "Trip", "emoji": "🧳"})["id"]
    ids = {"table": table}
    for spec in COLUMNS:
        ids[spec["title"]] = _api(
            nextcloud, "POST", f"/tables/{table}/columns", {"mandatory": False, **spec}
        )["id"]
    return ids


def _view_of_done(nextcloud: Nextcloud, ids: dict[str, int]) -> int:
    """A view "Done" showing Name and Hours of the rows whose Status is done (Nextcloud filters)."""
    view = _api(nextcloud, "POST", f"/tables/{ids['table']}/views", {"title": "Done"})["id"]
    shown = [ids["Name"], ids["Hours"]]
    rule: Any = [[{"columnId": ids["Status"], "operator": "is-equal", "value": "@selection-id-2"}]]
    if nextcloud.major < 34:  # Tables 0.9 takes JSON text; 2.2 takes JSON and column settings
        data: dict[str, Any] = {"columns": json.dumps(shown), "filter": json.dumps(rule)}
    else:
        data = {"columnSettings": [{"columnId": c, "order": n} for n, c in enumerate(shown)], "filter": rule}
    _api(nextcloud, "PUT", f"/views/{view}", {"data": data})
    return int(view)


def _cells(nextcloud: Nextcloud, row_id: int) -> dict[int, Any]:
    return {c["columnId"]: c["value"] for c in _api(nextcloud, "GET", f"/rows/{row_id}")["data"]}


def _add(nextcloud: Nextcloud, ids: dict[str, int], **values: Any) -> int:
    data = {str(ids[title]): value for title, value in values.items()}
    return int(_api(nextcloud, "POST", f"/tables/{ids['table']}/rows", {"data": data})["id"])


def _next_second() -> None:
    """Tables keeps a row's last change to the second: let the clock pass the second of the last
    write, so the next write gets a later time (polls the clock, at most about a second)."""
    start = int(time.time())
    deadline = time.monotonic() + 3
    while int(time.time()) == start:
        assert time.monotonic() < deadline


def _session(
    nextcloud: Nextcloud, human: Human | None = None, **settings: Any
) -> AbstractAsyncContextManager[ClientSession]:
    return toolset_session(nextcloud, "tables", human, **settings)


def _error(result: Any) -> str:
    assert result.is_error, result.content
    return str(result.content[0].text)


async def test_add_read_update_rows_checked_in_nextcloud(apps_nextcloud: Nextcloud) -> None:
    """The six tools are offered with their scopes; a row added by titles and labels is stored
    as Tables stores it, read back as {title: value}, and an update changes only its column."""
    nc = apps_nextcloud
    ids = _trip(nc)
    view = _view_of_done(nc, ids)
    async with _session(nc) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == set(TOOLS)
        for name, (scope, read_only, destructive) in TOOLS.items():
            assert tools[name].meta is not None
            assert tools[name].meta["nextcloud-mcp/scopes"] == [scope]
            assert tools[name].annotations is not None
            assert tools[name].annotations.read_only_hint is read_only
            assert tools[name].annotations.destructive_hint is destructive

        listed = structured(await session.call_tool("nc_tables_list_tables", {}))
        [trip] = [t for t in listed["tables"] if t["id"] == ids["table"]]
        assert (trip["title"], trip["columns"], trip["views"][0]["id"]) == ("Trip", 8, view)

        columns = structured(await session.call_tool("nc_tables_get_columns", {"table_id": ids["table"]}))
        by_title = {c["title"]: c for c in columns["columns"]}
        assert by_title["Status"]["options"] == ["open", "done"]
        assert (by_title["Tags"]["type"], by_title["Due"]["type"]) == ("selection-multi", "datetime-date")
        assert (by_title["Name"]["mandatory"], by_title["Hours"]["max"]) == (True, 100)

        values = {
            "Name": "Lisbon",
            "status": "Done",
            "Tags": ["blue", "red"],
            "Hours": 2.5,
            "Due": "2026-12-01",
            "Booked": True,
            "Link": "https://example.com/trip",
            str(ids["Notes"]): "pack light",
        }
        added = structured(
            await session.call_tool("nc_tables_add_row", {"table_id": ids["table"], "values": values})
        )
        row_id = added["row"]["id"]
        assert added["row"]["version"] is None  # one request: Tables' answer has no version
        stored = _cells(nc, row_id)
        assert stored[ids["Name"]] == "Lisbon"
        assert stored[ids["Status"]] in (2, "2")  # the option's id (34 keeps the id as text)
        assert stored[ids["Tags"]] == [1, 2]
        assert (stored[ids["Hours"]], stored[ids["Due"]], stored[ids["Booked"]]) == (
            2.5,
            "2026-12-01",
            "true",
        )
        assert json.loads(stored[ids["Link"]])["value"] == "https://example.com/trip"
        assert added["row"]["values"] == {
            "Name": "Lisbon",
            "Status": "done",
            "Tags": ["red", "blue"],
            "Hours": 2.5,
            "Due": "2026-12-01",
            "Booked": True,
            "Link": "https://example.com/trip",
            "Notes": "pack light",
        }

        page = structured(await session.call_tool("nc_tables_read_rows", {"table_id": ids["table"]}))
        assert [r["values"]["Name"] for r in page["rows"]] == ["Lisbon"]
        assert page["next_offset"] is None
        version = page["rows"][0]["version"]
        shown = structured(await session.call_tool("nc_tables_read_rows", {"view_id": view}))
        assert shown["rows"][0]["values"] == {"Name": "Lisbon", "Hours": 2.5}  # the view's columns

        _next_second()
        updated = structured(
            await session.call_tool(
                "nc_tables_update_row", {"row_id": row_id, "version": version, "values": {"Hours": 4}}
            )
        )
        assert updated["row"]["values"]["Hours"] == 4
        assert updated["row"]["version"] != version
        after = _cells(nc, row_id)
        assert after[ids["Hours"]] == 4
        assert {k: v for k, v in after.items() if k != ids["Hours"]} == {
            k: v for k, v in stored.items() if k != ids["Hours"]
        }

        # the version read before that update is stale now: nothing is written
        stale = await session.call_tool(
            "nc_tables_update_row", {"row_id": row_id, "version": version, "values": {"Hours": 9}}
        )
        details = refusal_details(stale)
        assert details["error"] == "conflict"
        assert details["current_row"]["values"]["Hours"] == 4
        assert "nothing was overwritten" in _error(stale)
        assert "changed since that version was read" in _error(stale)  # the argument's own name
        assert _cells(nc, row_id)[ids["Hours"]] == 4


async def test_values_that_do_not_fit_are_refused_naming_the_column(apps_nextcloud: Nextcloud) -> None:
    """Tables itself would store these as empty cells; the tool refuses them and adds nothing."""
    nc = apps_nextcloud
    ids = _trip(nc)
    refused = {
        "Hours": ("abc", 'column "Hours"'),
        "Status": ("maybe", "has no option 'maybe'; its options: 'open', 'done'"),
        "Due": ("tomorrow", "takes YYYY-MM-DD"),
        "Booked": ("yes please", 'column "Booked"'),
        "Link": ("javascript:alert(1)", "takes one http(s) URL"),
        "Tags": (["green"], "has no option 'green'"),
        "Nowhere": ("x", 'no column "Nowhere"'),
    }
    async with _session(nc) as session:
        for column, (value, words) in refused.items():
            result = await session.call_tool(
                "nc_tables_add_row", {"table_id": ids["table"], "values": {"Name": "x", column: value}}
            )
            assert words in _error(result), column
            assert "nothing was changed" in _error(result)
        for values, words in (
            ({"Hours": 150, "Name": "x"}, "up to 100"),
            ({"Status": "open"}, "mandatory columns need a value: 'Name'"),
            ({"Name": "a\nb"}, "takes one line"),
            ({"Name": "x" * 100_001}, "at most 100000 characters"),
        ):
            result = await session.call_tool(
                "nc_tables_add_row", {"table_id": ids["table"], "values": values}
            )
            assert words in _error(result), values
        gone = await session.call_tool("nc_tables_read_rows", {"table_id": 999_999})
        assert "table 999999" in _error(gone)
    assert _api(nc, "GET", f"/tables/{ids['table']}/rows") == []


async def test_filters_paging_and_long_texts(apps_nextcloud: Nextcloud) -> None:
    """Filters are applied after reading (the API has none for rows), pages continue from
    next_offset, a long text is cut in the answer and said so."""
    nc = apps_nextcloud
    ids = _trip(nc)
    for n in range(6):
        _add(
            nc, ids, Name=f"stop {n}", Hours=n, Status=2 if n % 2 else 1, Notes="x" * (3000 if n == 5 else 3)
        )
    async with _session(nc) as session:
        args = {"table_id": ids["table"], "filters": [{"column": "Hours", "op": "greater_than", "value": 1}]}
        first = structured(await session.call_tool("nc_tables_read_rows", {**args, "limit": 2}))
        assert [r["values"]["Name"] for r in first["rows"]] == ["stop 2", "stop 3"]
        rest = structured(
            await session.call_tool(
                "nc_tables_read_rows", {**args, "limit": 10, "offset": first["next_offset"]}
            )
        )
        assert [r["values"]["Name"] for r in rest["rows"]] == ["stop 4", "stop 5"]
        assert rest["next_offset"] is None
        tail = structured(
            await session.call_tool(
                "nc_tables_read_rows",
                {
                    "table_id": ids["table"],
                    "filters": [{"column": "Notes", "op": "contains", "value": "x" * 2999}],
                },
            )
        )
        assert [r["values"]["Name"] for r in tail["rows"]] == ["stop 5"]  # matched beyond the cut
        long = rest["rows"][1]
        assert long["cut"] == ["Notes"]
        assert len(long["values"]["Notes"]) == 501

        done = structured(
            await session.call_tool(
                "nc_tables_read_rows",
                {
                    "table_id": ids["table"],
                    "columns": ["Name"],
                    "filters": [
                        {"column": "status", "op": "equals", "value": "DONE"},
                        {"column": "Name", "op": "contains", "value": "stop"},
                    ],
                },
            )
        )
        assert done["rows"]
        assert all(set(r["values"]) == {"Name"} for r in done["rows"])
        assert [r["values"]["Name"] for r in done["rows"]] == ["stop 1", "stop 3", "stop 5"]

        paged = structured(
            await session.call_tool("nc_tables_read_rows", {"table_id": ids["table"], "limit": 4})
        )
        assert (len(paged["rows"]), paged["next_offset"]) == (4, 4)
        bad = await session.call_tool(
            "nc_tables_read_rows",
            {"table_id": ids["table"], "filters": [{"column": "Hours", "op": "less_than"}]},
        )
        assert "needs a value" in _error(bad)


async def test_deleting_a_row_asks_first(apps_nextcloud: Nextcloud) -> None:
    nc = apps_nextcloud
    ids = _trip(nc)
    row = _add(nc, ids, Name="Porto", Hours=3)
    no = Human(approve=False)
    async with _session(nc, no) as session:
        refused = await session.call_tool("nc_tables_delete_row", {"row_id": row})
        assert refused.is_error
    assert _cells(nc, row)[ids["Name"]] == "Porto"
    assert no.questions
    assert no.questions[0].startswith(f'Delete row {row} of the table "Trip" (Name: Porto')
    yes = Human()
    async with _session(nc, yes) as session:
        deleted = structured(await session.call_tool("nc_tables_delete_row", {"row_id": row}))
    assert deleted == {"id": row, "table_id": ids["table"], "deleted": True}
    with nc.http(nc.alice) as http:
        assert http.get(f"{API}/rows/{row}", headers={"Accept": "application/json"}).status_code == 404


async def test_emptying_a_cell_is_refused_at_level_write(apps_nextcloud: Nextcloud) -> None:
    nc = apps_nextcloud
    ids = _trip(nc)
    row = _add(nc, ids, Name="Faro", Notes="a long note about Faro")
    async with _session(nc, nextcloud_mcp_permissions="write") as session:
        page = structured(await session.call_tool("nc_tables_read_rows", {"table_id": ids["table"]}))
        version = page["rows"][0]["version"]
        result = await session.call_tool(
            "nc_tables_update_row", {"row_id": row, "version": version, "values": {"Notes": None}}
        )
        assert "removes content" in _error(result)
    assert _cells(nc, row)[ids["Notes"]] == "a long note about Faro"


async def test_without_the_tables_app_the_tools_say_so(apps_nextcloud: Nextcloud) -> None:
    nc = apps_nextcloud
    # through Nextcloud's own API, with the login password: php-fpm caches what occ changes
    with httpx.Client(base_url=nc.url, auth=(nc.admin.user, nc.admin.password)) as admin:
        disabled = admin.delete(
            "/ocs/v2.php/cloud/apps/tables", headers={"OCS-APIRequest": "true", "Accept": "application/json"}
        )
    assert disabled.status_code == 200, disabled.text
    async with _session(nc) as session:
        result = await session.call_tool("nc_tables_list_tables", {})
    assert "Tables is not installed or not enabled for you on this Nextcloud" in _error(result)


async def test_another_users_table_and_row_stay_closed(apps_nextcloud: Nextcloud) -> None:
    """Admin's table, its columns and its row are refused to alice; nothing of it is changed."""
    nc = apps_nextcloud
    with nc.http(nc.admin) as http:
        table = http.post(
            f"{API}/tables", json={"title": "Salaries"}, headers={"Accept": "application/json"}
        ).json()
        column = {"title": "Who", "type": "text", "subtype": "line", "mandatory": False}
        who = http.post(
            f"{API}/tables/{table['id']}/columns", json=column, headers={"Accept": "application/json"}
        )
        row = http.post(
            f"{API}/tables/{table['id']}/rows",
            json={"data": {str(who.json()["id"]): "admin"}},
            headers={"Accept": "application/json"},
        ).json()
    async with _session(nc) as session:
        listed = structured(await session.call_tool("nc_tables_list_tables", {}))
        assert table["id"] not in [t["id"] for t in listed["tables"]], (table, listed)
        for tool, args in (
            ("nc_tables_get_columns", {"table_id": table["id"]}),
            ("nc_tables_read_rows", {"table_id": table["id"]}),
            ("nc_tables_add_row", {"table_id": table["id"], "values": {"Who": "alice"}}),
            ("nc_tables_update_row", {"row_id": row["id"], "version": "x", "values": {"Who": "alice"}}),
            ("nc_tables_delete_row", {"row_id": row["id"]}),
        ):
            said = _error(await session.call_tool(tool, args))
            assert "no access" in said or "does not exist" in said, (tool, said)
    with nc.http(nc.admin) as http:
        rows = http.get(f"{API}/tables/{table['id']}/rows", headers={"Accept": "application/json"}).json()
    assert [[c["value"] for c in r["data"]] for r in rows] == [["admin"]]


async def test_a_long_answer_is_cut_between_rows(
    apps_nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows stop before the answer outgrows its bound (made small here), and it says where to
    continue; the server runs in this process, so the bound can be lowered."""
    monkeypatch.setattr(tables_tools, "MAX_ANSWER", 3000)
    nc = apps_nextcloud
    ids = _trip(nc)
    for n in range(5):
        _add(nc, ids, Name=f"day {n}", Notes=str(n) * 2000)
    async with _session(nc) as session:
        page = structured(
            await session.call_tool("nc_tables_read_rows", {"table_id": ids["table"], "limit": 5})
        )
        first = [r["values"]["Name"] for r in page["rows"]]
        assert 1 <= len(first) < 5
        assert len(json.dumps(page["rows"])) <= 3000
        assert page["next_offset"] == len(first)
        assert f"cut at {len(first)} rows" in page["notice"]
        rest = structured(
            await session.call_tool(
                "nc_tables_read_rows", {"table_id": ids["table"], "offset": page["next_offset"], "limit": 5}
            )
        )
        more = [r["values"]["Name"] for r in rest["rows"]]
        assert first + more == [f"day {n}" for n in range(5)]


async def test_emptying_a_cell_asks_and_a_change_meanwhile_is_refused(apps_nextcloud: Nextcloud) -> None:
    """At level destructive, emptying a cell asks; if the row changes while the human is asked,
    the approval does not cover it and nothing is written."""
    nc = apps_nextcloud
    ids = _trip(nc)
    row = _add(nc, ids, Name="Evora", Notes="temple", Hours=2)

    async def someone_edits() -> None:
        _next_second()
        _api(nc, "PUT", f"/rows/{row}", {"data": {str(ids["Hours"]): 5}})

    meanwhile = Human(while_asked=someone_edits)
    async with _session(nc, meanwhile) as session:
        page = structured(await session.call_tool("nc_tables_read_rows", {"table_id": ids["table"]}))
        args = {"row_id": row, "version": page["rows"][0]["version"], "values": {"Notes": None}}
        refused = await session.call_tool("nc_tables_update_row", args)
        assert "changed while you were being asked" in _error(refused)
    assert meanwhile.questions == [f'Empty or cut "Notes" in row {row} of table {ids["table"]}?']
    assert _cells(nc, row)[ids["Notes"]] == "temple"

    async with _session(nc, Human()) as session:
        page = structured(await session.call_tool("nc_tables_read_rows", {"table_id": ids["table"]}))
        args = {"row_id": row, "version": page["rows"][0]["version"], "values": {"Notes": None}}
        emptied = structured(await session.call_tool("nc_tables_update_row", args))
    assert emptied["row"]["values"]["Notes"] is None
    assert _cells(nc, row).get(ids["Notes"]) in (None, "")
    assert _cells(nc, row)[ids["Hours"]] == 5
