"""The contacts toolset end to end, against the double and the real Nextcloud: a contact's life
(created, found by phone, updated while keeping what other apps put in it, deleted after
approval), vCard 4.0 and broken cards from other apps."""

from __future__ import annotations

import base64

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured
from tests.strict_clients import refusal_details

pytestmark = pytest.mark.integration

# A 1x1 PNG: what a phone puts in a contact's PHOTO.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


async def test_a_contact_is_created_found_by_phone_updated_keeping_its_photo_and_deleted_after_approval(
    nextcloud: Nextcloud,
) -> None:
    """Created by the tool; a phone then adds a photo and a custom field; the contact is found by
    its number written differently; an update of the organisation keeps photo and custom field;
    deleting asks the human and removes it."""
    human = Human()
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            created = structured(
                await session.call_tool(
                    "nc_contacts_create_contact",
                    {
                        "full_name": "Julia Müller",
                        "given_name": "Julia",
                        "family_name": "Müller",
                        "phones": [{"value": "+49 30 1234567", "types": ["cell"]}],
                        "emails": [{"value": "julia@example.org", "types": ["work"]}],
                        "groups": ["Family"],
                    },
                )
            )
            name = f"{created['uid']}.vcf"
            stored = nextcloud.card(nextcloud.admin, name)
            assert stored is not None
            with_photo = stored.replace(
                "END:VCARD", f"PHOTO;ENCODING=b;TYPE=PNG:{PNG}\nX-PHONE-APP-ID:abc-123\nEND:VCARD"
            )
            nextcloud.put_card(nextcloud.admin, name, with_photo)

            found = structured(await session.call_tool("nc_contacts_search", {"query": "030 / 123 45 67"}))
            [julia] = found["contacts"]
            assert (julia["uid"], julia["full_name"], julia["has_photo"]) == (
                created["uid"],
                "Julia Müller",
                True,
            )
            by_group = structured(
                await session.call_tool("nc_contacts_search", {"query": "family", "field": "group"})
            )
            assert [c["uid"] for c in by_group["contacts"]] == [created["uid"]]

            updated = structured(
                await session.call_tool(
                    "nc_contacts_update_contact",
                    {"uid": julia["uid"], "etag": julia["etag"], "organisation": "Heating AG"},
                )
            )
            assert updated["organisation"] == "Heating AG"
            assert updated["phones"] == [{"value": "+49 30 1234567", "types": ["cell"]}]
            after = nextcloud.card(nextcloud.admin, name)
            assert after is not None
            assert PNG in after
            assert "X-PHONE-APP-ID:abc-123" in after
            assert "ORG:Heating AG" in after

            deleted = structured(await session.call_tool("nc_contacts_delete_contact", {"uid": julia["uid"]}))
    assert deleted == {"uid": created["uid"], "full_name": "Julia Müller", "deleted": True}
    assert human.questions == [
        "Delete the contact \"Julia Müller\" (Heating AG, julia@example.org) from address book 'Contacts'?"
    ]
    assert nextcloud.card(nextcloud.admin, name) is None


async def test_a_declined_delete_and_a_stale_update_change_nothing(nextcloud: Nextcloud) -> None:
    """Declining keeps the contact; an update with an old etag is refused with the current card."""
    etag = nextcloud.put_card(
        nextcloud.admin,
        "kim.vcf",
        "BEGIN:VCARD\nVERSION:3.0\nUID:kim-1\nFN:Kim Lee\nN:Lee;Kim;;;\nEND:VCARD\n",
    )
    nextcloud.put_card(
        nextcloud.admin,
        "kim.vcf",
        "BEGIN:VCARD\nVERSION:3.0\nUID:kim-1\nFN:Kim Lee\nN:Lee;Kim;;;\nNOTE:new\nEND:VCARD\n",
    )
    human = Human(action="decline")
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            declined = await session.call_tool("nc_contacts_delete_contact", {"uid": "kim-1"})
            stale = await session.call_tool(
                "nc_contacts_update_contact", {"uid": "kim-1", "etag": etag, "title": "Boss"}
            )
    assert declined.is_error
    assert refusal_details(stale)["current_contact"]["note"] == "new"
    card = nextcloud.card(nextcloud.admin, "kim.vcf")
    assert card is not None
    assert "TITLE" not in card


async def test_vcard_4_and_broken_cards_from_other_apps_are_read_and_a_4_0_photo_survives(
    nextcloud: Nextcloud,
) -> None:
    """A vCard 4.0 card in Japanese is found by name and keeps its data-URI photo through an
    update; an odd card from another app is listed as it is."""
    nextcloud.put_card(
        nextcloud.admin,
        "kenji.vcf",
        "BEGIN:VCARD\nVERSION:4.0\nUID:kenji-2\nFN:山田 健二\nN:山田;健二;;;\n"
        f"TEL;VALUE=uri:tel:+81-3-5555-0100\nPHOTO:data:image/png;base64,{PNG}\nEND:VCARD\n",
    )
    # What Nextcloud accepts from other apps that is odd: repeated values, unknown properties.
    # (It refuses two FN or a repeated UID with 415/400; an undecodable PHOTO it stores, but
    # Radicale refuses it, so that case is covered by tests/nextcloud/test_vcard.py.)
    nextcloud.put_card(
        nextcloud.admin,
        "odd.vcf",
        "BEGIN:VCARD\nVERSION:3.0\nUID:odd-3\nFN:Yamada Twice\nN:Twice;Yamada;;;\n"
        "EMAIL:y@example.jp\nEMAIL:y@example.jp\nX-SOCIALPROFILE;TYPE=mastodon:@y@example.social\nEND:VCARD\n",
    )
    before = nextcloud.card(nextcloud.admin, "kenji.vcf")
    assert before is not None
    [photo] = [line for line in before.splitlines() if line.startswith("PHOTO")]
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            [kenji] = structured(await session.call_tool("nc_contacts_search", {"query": "山田"}))["contacts"]
            twice = structured(await session.call_tool("nc_contacts_search", {"query": "yamada"}))["contacts"]
            updated = structured(
                await session.call_tool(
                    "nc_contacts_update_contact",
                    {"uid": "kenji-2", "etag": kenji["etag"], "emails": [{"value": "kenji@example.jp"}]},
                )
            )
    assert kenji["phones"] == [{"value": "+81-3-5555-0100", "types": []}]
    assert kenji["has_photo"] is True
    [odd] = twice
    assert odd["full_name"] == "Yamada Twice"
    assert [e["value"] for e in odd["emails"]] == ["y@example.jp", "y@example.jp"]
    assert updated["emails"] == [{"value": "kenji@example.jp", "types": []}]
    after = nextcloud.card(nextcloud.admin, "kenji.vcf")
    assert after is not None
    # The photo line as the server served it before (the real one converts 4.0 to 3.0 on GET;
    # the double's Radicale re-serializes 4.0 data URIs with vobject on PUT and loses the image
    # data, before our update ever sees it) is exactly there after the update.
    assert photo in after.splitlines()
    assert "FN:山田 健二" in after
    if nextcloud.kind == "real":
        assert PNG in photo


async def test_a_line_break_in_a_type_or_a_value_is_refused_and_writes_nothing(nextcloud: Nextcloud) -> None:
    """`TEL;TYPE="CELL<LF>EMAIL:ATTACKER@X"` was stored as written, and both our reader and
    Nextcloud's index saw an extra EMAIL; now such input is refused before anything is written,
    on create and on update."""
    etag = nextcloud.put_card(
        nextcloud.admin,
        "kim.vcf",
        "BEGIN:VCARD\nVERSION:3.0\nUID:kim-1\nFN:Kim Lee\nN:Lee;Kim;;;\nEND:VCARD\n",
    )
    before = nextcloud.card(nextcloud.admin, "kim.vcf")
    injected = [{"value": "+49 30 1234567", "types": ["CELL\nEMAIL:ATTACKER@EXAMPLE.ORG"]}]
    in_value = [{"value": "eve@example.org\nEMAIL:attacker@example.org"}]
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            refused = [
                await session.call_tool("nc_contacts_create_contact", {"full_name": "Eve Example", **args})
                for args in ({"phones": injected}, {"emails": in_value})
            ]
            refused.append(
                await session.call_tool(
                    "nc_contacts_update_contact", {"uid": "kim-1", "etag": etag, "phones": injected}
                )
            )
            found = structured(await session.call_tool("nc_contacts_search", {"query": "attacker"}))
            eve = structured(await session.call_tool("nc_contacts_search", {"query": "Eve"}))
    for result in refused:
        assert result.is_error
        assert "nothing was" in result.content[0].text  # type: ignore[union-attr]
    assert found["contacts"] == []
    assert eve["contacts"] == []
    assert nextcloud.card(nextcloud.admin, "kim.vcf") == before


async def test_a_card_over_one_mib_is_read_whole_and_an_update_keeps_its_name_and_photo(
    nextcloud: Nextcloud,
) -> None:
    """Nextcloud accepts cards up to 5 MiB; one of 2 MiB (a large photo) once read as 'too
    large', and changing its family name dropped its given name."""
    photo = base64.b64encode(bytes(range(256)) * (6 * 1024)).decode()  # 1.5 MiB of data, 2 MiB as base64
    card = (
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:big-1\r\nFN:Kim Lee\r\nN:Lee;Kim;Jae;Dr.;\r\n"
        f"PHOTO;ENCODING=b;TYPE=JPEG:{photo}\r\nEND:VCARD\r\n"
    )
    nextcloud.put_card(nextcloud.admin, "big-1.vcf", card)
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            kim = structured(await session.call_tool("nc_contacts_get_contact", {"uid": "big-1"}))
            updated = structured(
                await session.call_tool(
                    "nc_contacts_update_contact", {"uid": "big-1", "etag": kim["etag"], "family_name": "Park"}
                )
            )
    assert (kim["full_name"], kim["given_name"], kim["family_name"], kim["has_photo"]) == (
        "Kim Lee",
        "Kim",
        "Lee",
        True,
    )
    assert (updated["given_name"], updated["family_name"]) == ("Kim", "Park")
    after = nextcloud.card(nextcloud.admin, "big-1.vcf")
    assert after is not None
    assert "N:Park;Kim;Jae;Dr.;" in after.splitlines()
    assert photo in after.replace("\r\n ", "").replace("\n ", "")


@pytest.mark.parametrize(
    ("full_name", "given", "family"),
    [("Bob Kiwi", "Bob", "Kiwi"), ("Vincent van Gogh", "Vincent", "van Gogh"), ("Cher", "Cher", "")],
)
async def test_a_contact_created_with_only_a_full_name_gets_given_and_family_names(
    nextcloud: Nextcloud, full_name: str, given: str, family: str
) -> None:
    """Split as address books do (issue 33): the last word, with a particle before it, is the
    family name; one word is a given name. It used to become N:;Bob Kiwi;;;."""
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp") as session:
            created = structured(
                await session.call_tool("nc_contacts_create_contact", {"full_name": full_name})
            )
    assert (created["given_name"], created["family_name"]) == (given, family)
    stored = nextcloud.card(nextcloud.admin, f"{created['uid']}.vcf")
    assert stored is not None
    assert f"N:{family};{given};;;" in stored.splitlines()
