"""Smoke tests of the `nextcloud` fixture: the same assertions against the double and the real
Nextcloud 29.0.6 from the kit."""

from __future__ import annotations

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured

pytestmark = pytest.mark.integration


async def test_a_note_created_over_mcp_is_seen_by_nextcloud(nextcloud: Nextcloud) -> None:
    """nc_notes_create_note writes a note that Nextcloud's own Notes API then lists."""
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            created = structured(
                await session.call_tool(
                    "nc_notes_create_note", {"title": "Groceries", "content": "milk", "category": "Home"}
                )
            )
    [note] = nextcloud.notes()
    assert (note["id"], note["title"], note["category"], note["content"]) == (
        created["id"],
        "Groceries",
        "Home",
        "milk",
    )


async def test_a_folder_is_deleted_after_the_human_approved(nextcloud: Nextcloud) -> None:
    """Deleting a folder with approvals on asks once, then the folder and its file are gone
    (real Nextcloud refuses If-Match on a collection with 412, so it must not be sent)."""
    nextcloud.put_file(nextcloud.admin, "Old/a.txt", b"a")
    human = Human()
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            result = await session.call_tool("nc_webdav_delete_resource", {"path": "Old"})
    assert structured(result) == {"path": "/Old", "type": "directory"}
    assert len(human.questions) == 1
    assert human.questions[0].startswith("Delete the folder /Old with 1 item(s) directly inside")
    assert not nextcloud.exists(nextcloud.admin, "Old")
