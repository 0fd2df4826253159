"""What the Tables tests share: Tables' own REST API for alice, the test table "Trip" and a view of
it, and a session of the tables toolset."""

from __future__ import annotations

import json
import time
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp import ClientSession

from tests.backends import Nextcloud
from tests.mcp_clients import Human, toolset_session
from tests.toolsets.tables.trip_table import COLUMNS

__all__ = [
    "API",
    "add",
    "api",
    "cells",
    "error",
    "make_trip",
    "next_second",
    "tables_session",
    "view_of_done",
]

API = "/index.php/apps/tables/api/1"


def api(nextcloud: Nextcloud, method: str, path: str, body: Any = None) -> Any:
    with nextcloud.http(nextcloud.alice) as http:
        answer = http.request(method, f"{API}{path}", json=body, headers={"Accept": "application/json"})
    assert answer.status_code == 200, (method, path, answer.status_code, answer.text[:300])
    return answer.json()


def make_trip(nextcloud: Nextcloud) -> dict[str, int]:
    """A table "Trip" of alice's with one column of each kind; {title: column id, "table": id}."""
    table = api(nextcloud, "POST", "/tables", {"title": "Trip", "emoji": "🧳"})["id"]
    ids = {"table": table}
    for spec in COLUMNS:
        ids[spec["title"]] = api(nextcloud, "POST", f"/tables/{table}/columns", {"mandatory": False, **spec})[
            "id"
        ]
    return ids


def view_of_done(nextcloud: Nextcloud, ids: dict[str, int]) -> int:
    """A view "Done" showing Name and Hours of the rows whose Status is done (Nextcloud filters)."""
    view = api(nextcloud, "POST", f"/tables/{ids['table']}/views", {"title": "Done"})["id"]
    shown = [ids["Name"], ids["Hours"]]
    rule: Any = [[{"columnId": ids["Status"], "operator": "is-equal", "value": "@selection-id-2"}]]
    if nextcloud.major < 34:  # Tables 0.9 takes JSON text; 2.2 takes JSON and column settings
        data: dict[str, Any] = {"columns": json.dumps(shown), "filter": json.dumps(rule)}
    else:
        data = {"columnSettings": [{"columnId": c, "order": n} for n, c in enumerate(shown)], "filter": rule}
    api(nextcloud, "PUT", f"/views/{view}", {"data": data})
    return int(view)


def cells(nextcloud: Nextcloud, row_id: int) -> dict[int, Any]:
    return {c["columnId"]: c["value"] for c in api(nextcloud, "GET", f"/rows/{row_id}")["data"]}


def add(nextcloud: Nextcloud, ids: dict[str, int], **values: Any) -> int:
    data = {str(ids[title]): value for title, value in values.items()}
    return int(api(nextcloud, "POST", f"/tables/{ids['table']}/rows", {"data": data})["id"])


def next_second() -> None:
    """Tables keeps a row's last change to the second: let the clock pass the second of the last
    write, so the next write gets a later time (polls the clock, at most about a second)."""
    start = int(time.time())
    deadline = time.monotonic() + 3
    while int(time.time()) == start:
        assert time.monotonic() < deadline


def tables_session(
    nextcloud: Nextcloud, human: Human | None = None, **settings: Any
) -> AbstractAsyncContextManager[ClientSession]:
    return toolset_session(nextcloud, "tables", human, **settings)


def error(result: Any) -> str:
    assert result.is_error, result.content
    return str(result.content[0].text)
