"""The benchmarks' SDK floor (bench/sdk_floor.py) gives the answers this server gives.

`make bench` reads this server's cost above the SDK as its latency over the floor's, which means
something only while a client gets the same thing from both: the same output schemas (what it
validates each result against) and the same text and structured content. Checked here against the
double, with notes and files whose order and names need care.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.conftest import ADMIN_APP_PASSWORD
from tests.mcp_clients import http_session
from tests.nextcloud_double.server import serve_in_thread

FLOOR = Path(__file__).resolve().parents[1] / "bench" / "sdk_floor.py"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("nc_notes_list_notes", {}),
    ("nc_notes_list_notes", {"limit": 2, "offset": 1}),
    ("nc_webdav_list_directory", {"path": "Docs"}),
    ("nc_webdav_list_directory", {"path": "/Docs/Sub folder/", "limit": 1}),
]


def _floor_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sdk_floor", FLOOR)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _seed(url: str) -> list[int]:
    """Three notes (the favorite one changed last, a unicode title, categories) and a folder whose
    files and folders sort differently by case; returns the notes' ids."""
    ids = []
    with httpx.Client(base_url=url, auth=("admin", ADMIN_APP_PASSWORD)) as nc:
        notes = "/index.php/apps/notes/api/v1/notes"
        for title, category, favorite in (
            ("Groceries", "", False),
            ("Été ☀", "Travel/2026", True),
            ("b", "x", False),
        ):
            answer = nc.post(notes, json={"title": title, "content": f"# {title}", "category": category})
            answer.raise_for_status()
            ids.append(answer.json()["id"])
            if favorite:
                nc.put(f"{notes}/{ids[-1]}", json={"favorite": True}).raise_for_status()
        dav = "/remote.php/dav/files/admin"
        for folder in ("Docs", "Docs/Sub folder", "Docs/alpha"):
            nc.request("MKCOL", f"{dav}/{folder}").raise_for_status()
        for name in ("b.txt", "A file é.md", "Zeta.csv", "Sub folder/inner.txt", "Sub folder/z.txt"):
            nc.put(f"{dav}/Docs/{name}", content=name.encode()).raise_for_status()
    return ids


@pytest.mark.integration
async def test_the_floor_answers_as_this_server_does(double_url: str, mcp_url: str) -> None:
    ids = _seed(double_url)
    floor = _floor_module().build(double_url, "admin", ADMIN_APP_PASSWORD)
    with serve_in_thread(floor.streamable_http_app(json_response=True)) as floor_base:
        async with http_session(mcp_url) as ours, http_session(f"{floor_base}/mcp") as bare:
            our_tools = {t.name: t for t in (await ours.list_tools()).tools}
            floor_tools = (await bare.list_tools()).tools
            assert {t.name for t in floor_tools} == {
                "nc_notes_list_notes",
                "nc_notes_get_note",
                "nc_webdav_list_directory",
            }
            for tool in floor_tools:
                assert tool.output_schema == our_tools[tool.name].output_schema, tool.name
            for name, args in [*CALLS, *(("nc_notes_get_note", {"note_id": i}) for i in ids)]:
                expected, got = await ours.call_tool(name, args), await bare.call_tool(name, args)
                assert not expected.is_error, expected.content
                assert got.structured_content == expected.structured_content, (name, args)
                assert got.content == expected.content, (name, args)
