"""The tables toolset end to end: the SDK's client, the server, and the real Nextcloud 29 (Tables
0.9.11) and 34 (Tables 2.2.2). Tables, columns and views are made through Tables' own REST API in
each test, and every change the tools make is checked there too."""

from __future__ import annotations

import json

import pytest

from nextcloud_mcp_server.toolsets.tables import tools as tables_tools
from tests.backends import Nextcloud
from tests.mcp_clients import Human, structured
from tests.strict_clients import refusal_details
from tests.toolsets.tables.tables_api import (
    API,
    add,
    cells,
    error,
    make_trip,
    next_second,
    tables_session,
    view_of_done,
)

pytestmark = pytest.mark.integration

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


async def test_add_read_update_rows_checked_in_nextcloud(apps_nextcloud: Nextcloud) -> None:
    """The six tools are offered with their scopes; a row added by titles and labels is stored
    as Tables stores it, read back as {title: value}, and an update changes only its column."""
    nc = apps_nextcloud
    ids = make_trip(nc)
    view = view_of_done(nc, ids)
    async with tables_session(nc) as session:
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
        stored = cells(nc, row_id)
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

        next_second()
        updated = structured(
            await session.call_tool(
                "nc_tables_update_row", {"row_id": row_id, "version": version, "values": {"Hours": 4}}
            )
        )
        assert updated["row"]["values"]["Hours"] == 4
        assert updated["row"]["version"] != version
        after = cells(nc, row_id)
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
        assert "nothing was overwritten" in error(stale)
        assert "changed since that version was read" in error(stale)  # the argument's own name
        assert cells(nc, row_id)[ids["Hours"]] == 4


async def test_filters_paging_and_long_texts(apps_nextcloud: Nextcloud) -> None:
    """Filters are applied after reading (the API has none for rows), pages continue from
    next_offset, a long text is cut in the answer and said so."""
    nc = apps_nextcloud
    ids = make_trip(nc)
    for n in range(6):
        add(nc, ids, Name=f"stop {n}", Hours=n, Status=2 if n % 2 else 1, Notes="x" * (3000 if n == 5 else 3))
    async with tables_session(nc) as session:
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
        assert "needs a value" in error(bad)


async def test_deleting_a_row_asks_first(apps_nextcloud: Nextcloud) -> None:
    nc = apps_nextcloud
    ids = make_trip(nc)
    row = add(nc, ids, Name="Porto", Hours=3)
    no = Human(approve=False)
    async with tables_session(nc, no) as session:
        refused = await session.call_tool("nc_tables_delete_row", {"row_id": row})
        assert refused.is_error
    assert cells(nc, row)[ids["Name"]] == "Porto"
    assert no.questions
    assert no.questions[0].startswith(f'Delete row {row} of the table "Trip" (Name: Porto')
    yes = Human()
    async with tables_session(nc, yes) as session:
        deleted = structured(await session.call_tool("nc_tables_delete_row", {"row_id": row}))
    assert deleted == {"id": row, "table_id": ids["table"], "deleted": True}
    with nc.http(nc.alice) as http:
        assert http.get(f"{API}/rows/{row}", headers={"Accept": "application/json"}).status_code == 404


async def test_a_long_answer_is_cut_between_rows(
    apps_nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows stop before the answer outgrows its bound (made small here), and it says where to
    continue; the server runs in this process, so the bound can be lowered."""
    monkeypatch.setattr(tables_tools, "MAX_ANSWER", 3000)
    nc = apps_nextcloud
    ids = make_trip(nc)
    for n in range(5):
        add(nc, ids, Name=f"day {n}", Notes=str(n) * 2000)
    async with tables_session(nc) as session:
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
