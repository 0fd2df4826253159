"""Pages another member titled with characters a model may not type: `a%2Fb`, which Collectives
stores as the file `a%2Fb.md`, and a right-to-left mark. The file's path was checked as if a
model had typed it: `%2F` decoded to a separator, the mark refused. Reading such a page failed,
and so did every search of its collective. Real Nextcloud 34 with Collectives; on 29 the tools
say they need 30."""

from __future__ import annotations

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app
from tests.toolsets.collectives.collectives_api import call, collective, ocs, settings, too_old_for

pytestmark = pytest.mark.integration

TITLES = ["a%2Fb", "\u202eevil", "50% off"]


async def test_pages_titled_with_escapes_or_marks_are_read_and_searched(apps_nextcloud: Nextcloud) -> None:
    nextcloud = apps_nextcloud
    if nextcloud.major < 30:
        await too_old_for(nextcloud)
        return
    made = collective(nextcloud, "Odd names")
    landing = made["landing"]["id"]
    for title in TITLES:  # planted as another client would: through Collectives' own API
        ocs(nextcloud, nextcloud.alice, "POST", f"/{made['id']}/pages/{landing}", title=title)
    with running_app(settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            listed = await call(session, "nc_collectives_list_pages", collective_id=made["id"])
            pages = {p["title"]: p["id"] for p in listed["pages"]}
            read = [
                await call(session, "nc_collectives_get_page", collective_id=made["id"], page_id=pages[t])
                for t in TITLES
            ]
            found = await call(session, "nc_collectives_search_pages", query="off", collective_id=made["id"])
    assert [r["title"] for r in read] == TITLES
    assert [(h["title"], h["matched_in"]) for h in found["hits"]] == [("50% off", "title")]
    assert found["complete"] is True
