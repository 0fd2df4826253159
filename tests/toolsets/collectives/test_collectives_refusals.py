"""What the collectives toolset refuses, and how (29 and 34 with Collectives): bad input before
anything is sent, an app an administrator disabled, a page file outside the user's files, a page
tree with cycles, orphans or an unknown root."""

from __future__ import annotations

import time
from typing import Any, cast

import pytest

from nextcloud_mcp_server.nextcloud.errors import InvalidInput, InvalidResponse
from nextcloud_mcp_server.toolsets.collectives import tools as collectives_tools
from nextcloud_mcp_server.toolsets.collectives.client import CollectivesClient, Page
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app
from tests.toolsets.collectives.collectives_api import TOO_OLD, said, settings


async def test_bad_input_is_refused_before_anything_is_sent(apps_nextcloud: Nextcloud) -> None:
    nextcloud = apps_nextcloud
    with running_app(settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            for tool, arguments, expected in [
                (
                    "nc_collectives_create_page",
                    {"collective_id": 1, "title": "  "},
                    "title must not be empty",
                ),
                ("nc_collectives_create_page", {"collective_id": 1, "title": "a\nb"}, "one line"),
                ("nc_collectives_create_page", {"collective_id": 1, "title": "x" * 201}, "at most 200"),
                ("nc_collectives_create_page", {"collective_id": 1, "title": "evil\u202e"}, "U+202E"),
                (
                    "nc_collectives_create_page",
                    {"collective_id": 1, "title": "big", "content": "x" * 1_000_001},
                    "over the limit",
                ),
                (
                    "nc_collectives_edit_page",
                    {"collective_id": 1, "page_id": 1, "etag": 'a", "b', "content": ""},
                    "one ETag",
                ),
                ("nc_collectives_search_pages", {"query": "   "}, "must contain a word"),
            ]:
                result = await session.call_tool(tool, arguments)
                assert result.is_error, (tool, arguments)
                if nextcloud.major < 30:  # refused before the input is even looked at
                    assert TOO_OLD in said(result), said(result)
                    continue
                assert expected in said(result), said(result)
                assert "nothing was changed" in said(result)
    # nothing reached Collectives: no folder of collectives was ever made for alice
    assert not nextcloud.exists(nextcloud.alice, ".Collectives")


async def test_without_the_app_every_tool_says_it_is_not_installed(apps_nextcloud: Nextcloud) -> None:
    """An administrator disabled Collectives (29 and 34): not 'too old', but not there."""
    nextcloud = apps_nextcloud
    assert nextcloud.instance is not None
    nextcloud.instance.occ("app:disable", "collectives")  # the next test's reset enables it again
    # Nextcloud 34 keeps the enabled apps in a cache for a moment: wait (with a deadline) until
    # Collectives' own route is gone for alice in several answers in a row.
    deadline, gone = time.monotonic() + 30, 0
    with nextcloud.http(nextcloud.alice) as http:
        while gone < 5:
            answer = http.get("/ocs/v2.php/apps/collectives/api/v1.0/collectives")
            gone = gone + 1 if answer.status_code == 404 else 0
            assert time.monotonic() < deadline, answer.status_code
    with running_app(settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            for tool, arguments in [
                ("nc_collectives_list_collectives", {}),
                ("nc_collectives_create_page", {"collective_id": 1, "title": "Plan"}),
            ]:
                result = await session.call_tool(tool, arguments)
                assert result.is_error
                text = said(result)
                assert "Collectives is not installed or not enabled for you" in text, text
                assert TOO_OLD not in text


def test_a_file_outside_the_users_files_is_refused() -> None:
    """Collectives names a page's file; a path that climbs out of the user's files is not read."""
    page = Page.model_validate(
        {
            "id": 7,
            "title": "x",
            "parentId": 0,
            "fileName": "Readme.md",
            "collectivePath": ".Collectives/../../bob",
        }
    )
    client = CollectivesClient(cast(Any, None), cast(Any, type("Files", (), {"host": "nc.example"})()))
    with pytest.raises(InvalidResponse, match="unusable file for page 7"):
        client._file(page)


def test_the_tree_leaves_out_cycles_and_orphans_and_refuses_an_unknown_root() -> None:
    def page(page_id: int, parent: int, title: str, order: list[int] | None = None) -> Page:
        return Page.model_validate(
            {
                "id": page_id,
                "title": title,
                "parentId": parent,
                "fileName": "a.md",
                "subpageOrder": order or [],
            }
        )

    pages = [
        page(1, 0, "Home", order=[3]),
        page(2, 1, "Alpha"),
        page(3, 1, "Zulu"),
        page(4, 5, "cycle a"),
        page(5, 4, "cycle b"),
        page(6, 99, "orphan"),
    ]
    assert [(p.title, depth) for p, depth in collectives_tools._tree(pages, None)] == [
        ("Home", 0),
        ("Zulu", 1),  # the collective's own order first
        ("Alpha", 1),
    ]
    assert [p.title for p, _ in collectives_tools._tree(pages, 4)] == ["cycle a", "cycle b"]
    with pytest.raises(InvalidInput, match="page 42 is not in this collective"):
        collectives_tools._tree(pages, 42)
