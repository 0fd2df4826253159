"""Documents, events and contacts into the index on the double (docs/ADR/0075, 0076): a PDF's
and an ODT's words found, a zip bomb and an oversized document found by name only (the bomb's
reason reported, the large file never downloaded); events, tasks and contacts read when their
calendar's or book's CTag moves, one request each when none did, gone when deleted, and confirmed
per container; images read by OCR only when it is on. The real 29 and 34 run the whole flow in
tests/integration/test_find_sources.py."""

from __future__ import annotations

import io
import time

import pytest
from PIL import Image, ImageDraw, ImageFont

from nextcloud_mcp_server.index.confirm import confirmed
from nextcloud_mcp_server.index.engine import Filters
from nextcloud_mcp_server.index.extract import Limits
from nextcloud_mcp_server.index.query import parse_query
from nextcloud_mcp_server.index.sources import sync_books, sync_calendars
from nextcloud_mcp_server.index.sqlite import SQLiteIndex
from nextcloud_mcp_server.index.sync import Round, sync_files
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from tests.backends import Nextcloud
from tests.index import documents

# the double only: the real 29 and 34 run the whole flow in tests/integration/test_find_sources.py
pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(180),
    pytest.mark.parametrize("nextcloud", ["double"], indirect=True),
]
USER = "nextcloud:admin"


def _round() -> Round:
    return Round(deadline=time.monotonic() + 120)


async def _keys(index: SQLiteIndex, query: str) -> set[str]:
    return {h.key for h in await index.search(USER, parse_query(query), Filters(), limit=50)}


async def test_documents_are_found_by_their_words_and_hostile_ones_by_name(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    admin = nextcloud.admin
    nextcloud.put_file(admin, "Docs/lease.pdf", documents.pdf(["the lease terms", "clause about pelicans"]))
    nextcloud.put_file(admin, "Docs/essay.odt", documents.odt(["a pelican essay"]))
    nextcloud.put_file(admin, "Docs/bomb.docx", documents.entity_bomb_docx())
    nextcloud.put_file(admin, "Docs/huge.pdf", documents.pdf(["pelican"] * 40))
    size = len(documents.pdf(["pelican"] * 40))
    work = _round()
    limits = Limits(max_file_bytes=size - 1)
    await sync_files(index, USER, await client.files(), work, limits=limits)
    assert await _keys(index, "pelican") == {"Docs/lease.pdf", "Docs/essay.odt"}
    assert await _keys(index, "bomb") == {"Docs/bomb.docx"}
    assert await _keys(index, "huge") == {"Docs/huge.pdf"}
    assert any("bomb.docx" in e and "DOCTYPE" in e for e in work.errors), work.errors
    assert work.requests == 2 + 3  # two listings; lease, essay and bomb read, huge.pdf never


EVENT = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:{kind}\r\nUID:{uid}\r\n"
    "DTSTAMP:20261101T090000Z\r\nDTSTART:20261201T090000Z\r\nSUMMARY:{summary}\r\n"
    "DESCRIPTION:{text}\r\nEND:{kind}\r\nEND:VCALENDAR\r\n"
)


async def test_events_tasks_and_contacts_follow_their_collections_versions(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    admin = nextcloud.admin
    nextcloud.put_calendar_object(
        admin, "e1", EVENT.format(kind="VEVENT", uid="e1", summary="Dentist", text="bring the x-ray")
    )
    tasks = (
        '<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop>'
        "<d:displayname>Tasks</d:displayname><c:supported-calendar-component-set>"
        '<c:comp name="VTODO"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>'
    )
    with nextcloud.http() as http:
        made = http.request("MKCALENDAR", nextcloud.calendar_path(admin, "tasks"), content=tasks)
        assert made.status_code == 201
    task = EVENT.format(kind="VTODO", uid="t1", summary="Buy seed", text="marigold seeds")
    nextcloud.put_calendar_object(admin, "t1", task, calendar="tasks")
    nextcloud.put_card(
        admin,
        "c1.vcf",
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:c1\r\nFN:Olga Plumber\r\nNOTE:fixes the boiler\r\nEND:VCARD\r\n",
    )
    first = _round()
    await sync_calendars(index, USER, client, first)
    await sync_books(index, USER, client, first)
    assert {k.rpartition("|")[2] for k in await _keys(index, "x-ray marigold boiler")} == set()  # all words
    assert {k.rpartition("|")[2] for k in await _keys(index, "marigold")} == {"t1"}
    assert {k.rpartition("|")[2] for k in await _keys(index, "boiler")} == {"c1"}
    dentist = await index.search(USER, parse_query("dentist"), Filters(), limit=5)
    assert [(h.kind, h.title) for h in dentist] == [("event", "Dentist")]
    unchanged = _round()
    await sync_calendars(index, USER, client, unchanged)
    await sync_books(index, USER, client, unchanged)
    assert (unchanged.requests, unchanged.read) == (2, 0)
    with nextcloud.http() as http:
        assert http.delete(nextcloud.calendar_path(admin) + "e1.ics").status_code == 204
    kept, dropped = await confirmed(
        index, USER, await index.search(USER, parse_query("dentist"), Filters(), limit=5), client
    )
    assert (kept, dropped) == ([], 1)  # confirmed gone before any round
    after = _round()
    await sync_calendars(index, USER, client, after)
    assert await _keys(index, "dentist") == set()
    assert {k.rpartition("|")[2] for k in await _keys(index, "marigold")} == {"t1"}


async def test_images_are_read_by_ocr_only_when_it_is_on(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    """OCR off (the default): a scan is found by its name and never downloaded. On: by its words
    (docs/ADR/0096)."""
    image = Image.new("L", (900, 160), 255)
    font = ImageFont.truetype("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf", 56)
    ImageDraw.Draw(image).text((30, 40), "flamingo invoice", font=font, fill=0)
    data = io.BytesIO()
    image.save(data, "PNG")
    nextcloud.put_file(nextcloud.admin, "Scans/receipt.png", data.getvalue())
    work = _round()
    await sync_files(index, USER, await client.files(), work, limits=Limits())
    assert await _keys(index, "receipt") == {"Scans/receipt.png"}
    assert await _keys(index, "flamingo") == set()
    assert work.requests == 2  # the listings only: the image is not read
    await index.forget(USER)
    work = _round()
    await sync_files(index, USER, await client.files(), work, limits=Limits(ocr="eng"))
    assert await _keys(index, "flamingo") == {"Scans/receipt.png"}, work.errors
