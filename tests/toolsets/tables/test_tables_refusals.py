"""The tables toolset refusing: values that do not fit a column, a cell emptied below level
destructive or changed while the human is asked, another user's table, and Nextcloud without the
Tables app; on the real Nextcloud 29 (Tables 0.9.11) and 34 (Tables 2.2.2)."""

from __future__ import annotations

import httpx
import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human, structured
from tests.toolsets.tables.tables_api import (
    API,
    add,
    api,
    cells,
    error,
    make_trip,
    next_second,
    tables_session,
)

pytestmark = pytest.mark.integration


async def test_values_that_do_not_fit_are_refused_naming_the_column(apps_nextcloud: Nextcloud) -> None:
    """Tables itself would store these as empty cells; the tool refuses them and adds nothing."""
    nc = apps_nextcloud
    ids = make_trip(nc)
    refused = {
        "Hours": ("abc", 'column "Hours"'),
        "Status": ("maybe", "has no option 'maybe'; its options: 'open', 'done'"),
        "Due": ("tomorrow", "takes YYYY-MM-DD"),
        "Booked": ("yes please", 'column "Booked"'),
        "Link": ("javascript:alert(1)", "takes one http(s) URL"),
        "Tags": (["green"], "has no option 'green'"),
        "Nowhere": ("x", 'no column "Nowhere"'),
    }
    async with tables_session(nc) as session:
        for column, (value, words) in refused.items():
            result = await session.call_tool(
                "nc_tables_add_row", {"table_id": ids["table"], "values": {"Name": "x", column: value}}
            )
            assert words in error(result), column
            assert "nothing was changed" in error(result)
        for values, words in (
            ({"Hours": 150, "Name": "x"}, "up to 100"),
            ({"Status": "open"}, "mandatory columns need a value: 'Name'"),
            ({"Name": "a\nb"}, "takes one line"),
            ({"Name": "x" * 100_001}, "at most 100000 characters"),
        ):
            result = await session.call_tool(
                "nc_tables_add_row", {"table_id": ids["table"], "values": values}
            )
            assert words in error(result), values
        gone = await session.call_tool("nc_tables_read_rows", {"table_id": 999_999})
        assert "table 999999" in error(gone)
    assert api(nc, "GET", f"/tables/{ids['table']}/rows") == []


async def test_emptying_a_cell_is_refused_at_level_write(apps_nextcloud: Nextcloud) -> None:
    nc = apps_nextcloud
    ids = make_trip(nc)
    row = add(nc, ids, Name="Faro", Notes="a long note about Faro")
    async with tables_session(nc, nextcloud_mcp_permissions="write") as session:
        page = structured(await session.call_tool("nc_tables_read_rows", {"table_id": ids["table"]}))
        version = page["rows"][0]["version"]
        result = await session.call_tool(
            "nc_tables_update_row", {"row_id": row, "version": version, "values": {"Notes": None}}
        )
        assert "removes content" in error(result)
    assert cells(nc, row)[ids["Notes"]] == "a long note about Faro"


async def test_without_the_tables_app_the_tools_say_so(apps_nextcloud: Nextcloud) -> None:
    nc = apps_nextcloud
    # through Nextcloud's own API, with the login password: php-fpm caches what occ changes
    with httpx.Client(base_url=nc.url, auth=(nc.admin.user, nc.admin.password)) as admin:
        disabled = admin.delete(
            "/ocs/v2.php/cloud/apps/tables", headers={"OCS-APIRequest": "true", "Accept": "application/json"}
        )
    assert disabled.status_code == 200, disabled.text
    async with tables_session(nc) as session:
        result = await session.call_tool("nc_tables_list_tables", {})
    assert "Tables is not installed or not enabled for you on this Nextcloud" in error(result)


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
    async with tables_session(nc) as session:
        listed = structured(await session.call_tool("nc_tables_list_tables", {}))
        assert table["id"] not in [t["id"] for t in listed["tables"]], (table, listed)
        for tool, args in (
            ("nc_tables_get_columns", {"table_id": table["id"]}),
            ("nc_tables_read_rows", {"table_id": table["id"]}),
            ("nc_tables_add_row", {"table_id": table["id"], "values": {"Who": "alice"}}),
            ("nc_tables_update_row", {"row_id": row["id"], "version": "x", "values": {"Who": "alice"}}),
            ("nc_tables_delete_row", {"row_id": row["id"]}),
        ):
            said = error(await session.call_tool(tool, args))
            assert "no access" in said or "does not exist" in said, (tool, said)
    with nc.http(nc.admin) as http:
        rows = http.get(f"{API}/tables/{table['id']}/rows", headers={"Accept": "application/json"}).json()
    assert [[c["value"] for c in r["data"]] for r in rows] == [["admin"]]


async def test_emptying_a_cell_asks_and_a_change_meanwhile_is_refused(apps_nextcloud: Nextcloud) -> None:
    """At level destructive, emptying a cell asks; if the row changes while the human is asked,
    the approval does not cover it and nothing is written."""
    nc = apps_nextcloud
    ids = make_trip(nc)
    row = add(nc, ids, Name="Evora", Notes="temple", Hours=2)

    async def someone_edits() -> None:
        next_second()
        api(nc, "PUT", f"/rows/{row}", {"data": {str(ids["Hours"]): 5}})

    meanwhile = Human(while_asked=someone_edits)
    async with tables_session(nc, meanwhile) as session:
        page = structured(await session.call_tool("nc_tables_read_rows", {"table_id": ids["table"]}))
        args = {"row_id": row, "version": page["rows"][0]["version"], "values": {"Notes": None}}
        refused = await session.call_tool("nc_tables_update_row", args)
        assert "changed while you were being asked" in error(refused)
    assert meanwhile.questions == [f'Empty or cut "Notes" in row {row} of table {ids["table"]}?']
    assert cells(nc, row)[ids["Notes"]] == "temple"

    async with tables_session(nc, Human()) as session:
        page = structured(await session.call_tool("nc_tables_read_rows", {"table_id": ids["table"]}))
        args = {"row_id": row, "version": page["rows"][0]["version"], "values": {"Notes": None}}
        emptied = structured(await session.call_tool("nc_tables_update_row", args))
    assert emptied["row"]["values"]["Notes"] is None
    assert cells(nc, row).get(ids["Notes"]) in (None, "")
    assert cells(nc, row)[ids["Hours"]] == 5
