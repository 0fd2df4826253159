"""Calendars and address books themselves (docs/ADR/0087): made, renamed and deleted through the
on-demand toolset, checked with DAV as another device sees it (alice's app password, never our
client); deleting asks, bound to what was read, and a decline leaves everything in place. The
flow runs on the double and the real 29 and 34; the edge cases on the double alone."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

import pytest
from mcp import ClientSession

from nextcloud_mcp_server.nextcloud.dav.collections import collection_id
from nextcloud_mcp_server.tools import toolset_tools
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured

pytestmark = pytest.mark.integration

TOOLSETS = "default,dav_collections"
_PROPFIND = (
    '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:x1="http://apple.com/ns/ical/">'
    "<d:prop><d:displayname/><x1:calendar-color/><d:resourcetype/></d:prop></d:propfind>"
)


def _collections(nc: Nextcloud, home: str, *, trashed: bool = False) -> dict[str, tuple[str, str]]:
    """id -> (display name, colour) of the live collections in a DAV home, as DAV lists them (or
    of those in Nextcloud's calendar trash bin)."""
    with nc.http(nc.alice) as client:
        answer = client.request("PROPFIND", home, content=_PROPFIND, headers={"Depth": "1"})
    assert answer.status_code == 207, answer.text[:300]
    found: dict[str, tuple[str, str]] = {}
    for response in ElementTree.fromstring(answer.content).iter("{DAV:}response"):
        href = (response.findtext("{DAV:}href") or "").rstrip("/")
        kinds = [k.tag for k in response.iter("{DAV:}resourcetype") for k in k]
        if href == home.rstrip("/") or any("deleted-calendar" in k for k in kinds) != trashed:
            continue
        name = response.findtext(".//{DAV:}displayname") or ""
        color = response.findtext(".//{http://apple.com/ns/ical/}calendar-color") or ""
        found[href.rpartition("/")[2]] = (name, color[:7].lower())
    return found


def _homes(nc: Nextcloud) -> tuple[str, str]:
    user = nc.alice.user
    return f"/remote.php/dav/calendars/{user}/", f"/remote.php/dav/addressbooks/users/{user}/"


async def _call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await session.call_tool(tool, arguments))


async def test_calendars_and_address_books_are_made_renamed_and_deleted_after_asking(
    nextcloud: Nextcloud,
) -> None:
    nc = nextcloud
    calendars, books = _homes(nc)
    human = Human(approve=False)
    settings = nc.settings(nc.alice, nextcloud_mcp_toolsets=TOOLSETS)
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            made = await _call(session, "nc_calendar_create_calendar", name="Work trips", color="#FF7A66")
            assert made == {"id": "work-trips", "name": "Work trips", "color": "#ff7a66", "holds": ["events"]}
            tasks = await _call(session, "nc_calendar_create_calendar", name="Chores", holds="tasks")
            assert tasks["holds"] == ["tasks"]
            book = await _call(session, "nc_contacts_create_address_book", name="Clients")
            assert book == {"id": "clients", "name": "Clients"}
            twice = await session.call_tool("nc_contacts_create_address_book", {"name": " clients "})
            assert twice.is_error
            assert "named 'Clients' already" in str(twice.content[0])

            renamed = await _call(
                session, "nc_calendar_update_calendar", calendar="work-trips", name="Trips", color="#317ccc"
            )
            assert (renamed["name"], renamed["color"]) == ("Trips", "#317ccc")
            assert _collections(nc, calendars)["work-trips"] == ("Trips", "#317ccc")
            again = await _call(
                session, "nc_contacts_rename_address_book", address_book="clients", name="Customers"
            )
            assert again == {"id": "clients", "name": "Customers"}
            assert _collections(nc, books)["clients"][0] == "Customers"
            # the calendar toolset sees it and fills it
            listed = await _call(session, "nc_calendar_list_calendars")
            assert "Trips" in [c["name"] for c in listed["calendars"]], listed
            await _call(
                session,
                "nc_calendar_create_event",
                calendar="work-trips",
                summary="Lyon",
                start="2026-12-04T09:00:00Z",
            )
            nc.put_card(
                nc.alice,
                "kim.vcf",
                "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:kim\r\nFN:Kim\r\nEND:VCARD\r\n",
                "clients",
            )

            declined = await session.call_tool("nc_calendar_delete_calendar", {"calendar": "Trips"})
            assert declined.is_error
            assert "declined" in str(declined.content[0])
            refused = await session.call_tool("nc_contacts_delete_address_book", {"address_book": "clients"})
            assert refused.is_error
            assert "work-trips" in _collections(nc, calendars)
            assert "clients" in _collections(nc, books)
            assert human.questions == [
                'Delete the calendar "Trips" (id work-trips) with its 1 events? '
                "Nextcloud keeps it in the Calendar app's trash bin until that is emptied.",
                'Delete the address book "Customers" (id clients) with its 1 contacts? '
                "It cannot be restored.",
            ]

            if nc.double is None:  # a calendar shared with alice (Radicale shares none) is not hers
                share = (
                    '<?xml version="1.0"?><o:share xmlns:d="DAV:" xmlns:o="http://owncloud.org/ns"><o:set>'
                    f"<d:href>principal:principals/users/{nc.alice.user}</d:href><o:read-write/></o:set></o:share>"
                )
                with nc.http(nc.admin) as admin:
                    shared = admin.post(
                        f"/remote.php/dav/calendars/{nc.admin.user}/personal/",
                        content=share,
                        headers={"Content-Type": "application/xml"},
                    )
                assert shared.status_code in (200, 204), shared.text[:300]
                theirs = f"personal_shared_by_{nc.admin.user}"
                assert theirs in _collections(nc, calendars)
                said = await session.call_tool("nc_calendar_delete_calendar", {"calendar": theirs})
                assert said.is_error
                assert f"shared with you by {nc.admin.user}" in str(said.content[0])
            human.approve = True
            gone = await _call(session, "nc_calendar_delete_calendar", calendar="work-trips")
            assert gone == {"id": "work-trips", "name": "Trips", "held": 1, "deleted": True}
            gone_book = await _call(session, "nc_contacts_delete_address_book", address_book="Customers")
            assert gone_book == {"id": "clients", "name": "Customers", "held": 1, "deleted": True}
    assert "work-trips" not in _collections(nc, calendars)
    if nc.double is None:  # what the question says: in the trash bin (Radicale has none)
        assert "Trips" in [name for name, _ in _collections(nc, calendars, trashed=True).values()]
    assert "chores" in _collections(nc, calendars)
    assert "clients" not in _collections(nc, books)


@pytest.mark.parametrize("nextcloud", ["double"], indirect=True)
async def test_names_are_checked_and_a_change_while_asked_deletes_nothing(nextcloud: Nextcloud) -> None:
    nc = nextcloud
    calendars, _ = _homes(nc)

    async def add_event() -> None:
        ics = (
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:late\r\n"
            "DTSTAMP:20261101T080000Z\r\nDTSTART:20261204T090000Z\r\nSUMMARY:Late\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
        )
        nc.put_calendar_object(nc.alice, "late", ics, calendar="plans")

    human = Human(while_asked=add_event)
    with running_app(nc.settings(nc.alice, nextcloud_mcp_toolsets=TOOLSETS)) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:

            async def refusal(tool: str, **arguments: Any) -> str:
                result = await session.call_tool(tool, arguments)
                assert result.is_error, result
                return str(result.content[0])

            assert "U+202E" in await refusal("nc_calendar_create_calendar", name="Plans\u202egnp.exe")
            assert "one non-empty line" in await refusal("nc_calendar_create_calendar", name="a\nb")
            assert "at most 100" in await refusal("nc_calendar_create_calendar", name="x" * 101)
            assert "six hex digits" in await refusal("nc_calendar_create_calendar", name="P", color="red")
            assert "named 'Personal' already" in await refusal("nc_calendar_create_calendar", name="PERSONAL")
            assert "give a new name" in await refusal("nc_calendar_update_calendar", calendar="personal")
            assert "no calendar 'nope'" in await refusal("nc_calendar_delete_calendar", calendar="nope")
            # an id is made from any name, numbered when taken
            odd = await _call(session, "nc_calendar_create_calendar", name="Été <&> ../x")
            assert odd["id"] == "ete-x"
            assert odd["name"] == "Été <&> ../x"
            made = await _call(session, "nc_calendar_create_calendar", name="Plans")
            assert made["id"] == "plans"
            other = await _call(session, "nc_calendar_create_calendar", name="plans!")
            assert other["id"] == "plans-2"
            assert "named 'Plans' already" in await refusal(
                "nc_calendar_update_calendar", calendar="plans-2", name="plans"
            )
            await _call(session, "nc_contacts_create_address_book", name="Clients")
            assert "named 'Clients' already" in await refusal(
                "nc_contacts_rename_address_book", address_book="contacts", name="CLIENTS"
            )
            assert "no address book 'nope'" in await refusal(
                "nc_contacts_delete_address_book", address_book="nope"
            )
            assert "U+200B" in await refusal("nc_contacts_create_address_book", name="Cli\u200bents")
            # an event added while the human is asked: the approval does not cover it
            changed = await refusal("nc_calendar_delete_calendar", calendar="plans")
            assert "changed while you were being asked" in changed
    assert "plans" in _collections(nc, calendars)
    assert human.questions[0].startswith('Delete the calendar "Plans" (id plans) with its 0 events?')


def test_the_toolset_is_on_demand_and_names_its_scopes() -> None:
    specs = {spec.name: spec for spec in toolset_tools("dav_collections")}
    assert {name: (spec.scopes, spec.destructive) for name, spec in specs.items()} == {
        "nc_calendar_create_calendar": (("calendar:write",), False),
        "nc_calendar_update_calendar": (("calendar:write",), False),
        "nc_calendar_delete_calendar": (("calendar:write",), True),
        "nc_contacts_create_address_book": (("contacts:write",), False),
        "nc_contacts_rename_address_book": (("contacts:write",), False),
        "nc_contacts_delete_address_book": (("contacts:write",), True),
    }


def test_ids_are_made_from_names_and_numbered_when_taken() -> None:
    assert collection_id("Work trips", [], "calendar") == "work-trips"
    assert collection_id("Work trips", ["work-trips", "work-trips-2"], "calendar") == "work-trips-3"
    assert collection_id("日本", [], "calendar") == "calendar"
    assert collection_id("../../x", [], "contacts") == "x"
    assert collection_id("a" * 300, [], "calendar") == "a" * 40
    assert collection_id("Ärzte & Co.", [], "contacts") == "arzte-co"
