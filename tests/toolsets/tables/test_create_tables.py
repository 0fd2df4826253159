"""Tables created from columns and a column added: the column settings checked before anything is
sent (no Nextcloud needed), and one flow on the real Nextcloud 29 (Tables 0.9.11) and 34 (Tables
2.2.2) checked through Tables' own REST API."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import ValidationError

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.toolsets.tables.tools_create import NewColumn, column_body
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured

API = "/index.php/apps/tables/api/1"


def test_each_kind_becomes_the_type_and_subtype_tables_takes() -> None:
    body = column_body(NewColumn(title=" Kind ", type="selection-multi", options=["Train", " Plane "]))
    assert (body["title"], body["type"], body["subtype"]) == ("Kind", "selection", "multi")
    assert json.loads(body["selectionOptions"]) == [{"id": 1, "label": "Train"}, {"id": 2, "label": "Plane"}]
    assert column_body(NewColumn(title="Cost", type="number", decimals=2))["numberDecimals"] == 2
    assert column_body(NewColumn(title="Stars", type="number-stars"))["numberMax"] == 5
    assert column_body(NewColumn(title="Booked", type="selection-check"))["selectionDefault"] == "false"
    assert column_body(NewColumn(title="When", type="datetime-date"))["subtype"] == "date"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"title": "Kind", "type": "selection"}, "a selection needs options"),
        ({"title": "Kind", "type": "selection", "options": ["A", "a"]}, "an option is given twice"),
        ({"title": "Kind", "type": "selection", "options": ["A\nB"]}, "each one line"),
        ({"title": "Name", "type": "text-line", "options": ["A"]}, "options are for selection columns only"),
        ({"title": "Name", "type": "text-line", "decimals": 2}, "decimals are for number columns only"),
        ({"title": "  ", "type": "text-line"}, "non-empty line"),
        ({"title": "Na\u202eme", "type": "text-line"}, "U+202E"),
    ],
)
def test_column_settings_tables_would_mangle_are_refused_before_any_request(
    given: dict[str, Any], said: str
) -> None:
    with pytest.raises(InvalidInput, match=re.escape(said)):
        column_body(NewColumn(**given))


@pytest.mark.parametrize(
    "given",
    [
        {"title": "x", "type": "text-rich"},  # not offered: needs the editor's own format
        {"title": "x", "type": "usergroup"},
        {"title": "x", "type": "number", "decimals": 11},
        {"title": "x" * 201, "type": "text-line"},
        {"title": "x", "type": "selection", "options": [str(i) for i in range(51)]},
        {"title": "x", "type": "text-line", "colour": "red"},  # unknown keys are refused
    ],
)
def test_out_of_bounds_columns_do_not_validate(given: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        NewColumn(**given)


def _api(nextcloud: Nextcloud, path: str) -> Any:
    with nextcloud.http(nextcloud.alice) as http:
        answer = http.get(f"{API}{path}", headers={"Accept": "application/json"})
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
    return answer.json()


@pytest.mark.integration
async def test_a_table_created_from_columns_takes_rows_and_a_new_column(apps_nextcloud: Nextcloud) -> None:
    config = apps_nextcloud.settings(apps_nextcloud.alice, nextcloud_mcp_toolsets="tables")
    columns = [
        {"title": "Name", "type": "text-line", "mandatory": True},
        {"title": "Cost", "type": "number", "decimals": 2},
        {"title": "By", "type": "selection", "options": ["Train", "Plane"]},
        {"title": "Booked", "type": "selection-check"},
        {"title": "On", "type": "datetime-date"},
    ]
    with running_app(config) as base:
        async with http_session(f"{base}/mcp") as client:
            made = structured(
                await client.call_tool(
                    "nc_tables_create_table", {"title": "Trips", "emoji": "🧳", "columns": columns}
                )
            )
            assert [(c["title"], c["type"]) for c in made["columns"]] == [
                ("Name", "text-line"),
                ("Cost", "number"),
                ("By", "selection"),
                ("Booked", "selection-check"),
                ("On", "datetime-date"),
            ]
            table = made["id"]
            row = {"Name": "Rome", "Cost": 120.5, "By": "Train", "Booked": True, "On": "2026-12-01"}
            structured(await client.call_tool("nc_tables_add_row", {"table_id": table, "values": row}))
            added = structured(
                await client.call_tool(
                    "nc_tables_add_column",
                    {"table_id": table, "column": {"title": "Stars", "type": "number-stars"}},
                )
            )
            assert added["type"] == "number-stars"
            again = await client.call_tool(
                "nc_tables_add_column", {"table_id": table, "column": {"title": "stars", "type": "number"}}
            )
            assert again.is_error
            assert 'already has a column "stars"' in again.content[0].text  # type: ignore[union-attr]
            structured(
                await client.call_tool(
                    "nc_tables_add_row", {"table_id": table, "values": {"Name": "Oslo", "Stars": 4}}
                )
            )
    stored = _api(apps_nextcloud, f"/tables/{table}")
    assert (stored["title"], stored["emoji"], stored["ownership"]) == ("Trips", "🧳", "alice")
    found = {c["title"]: c for c in _api(apps_nextcloud, f"/tables/{table}/columns")}
    assert list(found) == ["Name", "Cost", "By", "Booked", "On", "Stars"]
    assert found["Name"]["mandatory"] is True
    assert (found["Cost"]["type"], found["Cost"]["numberDecimals"]) == ("number", 2)
    assert [o["label"] for o in found["By"]["selectionOptions"]] == ["Train", "Plane"]
    assert (found["Stars"]["type"], found["Stars"]["subtype"]) == ("number", "stars")
    rows = _api(apps_nextcloud, f"/tables/{table}/rows")
    cells = [
        {
            found_title: cell["value"]
            for cell in r["data"]
            for found_title, c in found.items()
            if c["id"] == cell["columnId"]
        }
        for r in rows
    ]
    assert cells[0] == {"Name": "Rome", "Cost": 120.5, "By": 1, "Booked": "true", "On": "2026-12-01"}
    assert (cells[1]["Name"], cells[1]["Stars"]) == ("Oslo", 4)
