"""The sharing toolset end to end, against the double and the real Nextcloud: nothing is exposed
without the human's approval, and the question says what, to whom, with which rights, until when."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured

pytestmark = pytest.mark.integration


def _in_days(days: int) -> str:
    return (date.today() + timedelta(days=days)).isoformat()


async def test_a_public_link_with_password_and_expiry_is_created_after_approval_and_removed(
    nextcloud: Nextcloud,
) -> None:
    """The human is asked (path, anyone with the link and password, read only, last day); then
    Nextcloud has the link with a password and that expiry; removing it asks again and it is gone."""
    nextcloud.make_folder(nextcloud.admin, "Taxes")
    until = _in_days(30)
    human = Human()
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            created = structured(
                await session.call_tool(
                    "nc_share_create",
                    {"path": "Taxes", "kind": "link", "password": "Corr3ct-Horse-7", "expire_date": until},
                )
            )
            [question] = human.questions
            assert question == (
                "Share the folder /Taxes with anyone with the link and its password, "
                f"to read only, until {until} (inclusive)?"
            )
            [link] = nextcloud.shares(nextcloud.admin)
            assert (link["share_type"], link["path"], link["expiration"]) == (
                3,
                "/Taxes",
                # the same last day, written as its start (29) or its end (34)
                f"{until} 23:59:59" if nextcloud.major >= 34 else f"{until} 00:00:00",
            )
            assert link["password"]
            assert created["kind"] == "link"
            assert created["has_password"]
            assert created["expires"] == until
            assert created["url"].endswith("/s/" + link["token"])
            assert "password" not in created
            assert "Corr3ct" not in str(created)
            removed = structured(await session.call_tool("nc_share_delete", {"share_id": created["id"]}))
    assert removed == {"id": created["id"], "path": "/Taxes", "removed": True}
    assert human.questions[1] == (
        "Remove the link share of /Taxes? Anyone with the link and its password will lose access."
    )
    assert nextcloud.shares(nextcloud.admin) == []


async def test_a_declined_public_link_is_never_created(nextcloud: Nextcloud) -> None:
    """The human declines: the tool says so and Nextcloud has no share."""
    nextcloud.make_folder(nextcloud.admin, "Taxes")
    human = Human(action="decline")
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            result = await session.call_tool("nc_share_create", {"path": "Taxes", "kind": "link"})
    assert result.is_error
    assert "declined" in result.content[0].text  # type: ignore[union-attr]
    assert "no password" in human.questions[0]
    assert "with no end date" in human.questions[0]
    assert nextcloud.shares(nextcloud.admin) == []


async def test_a_folder_shared_with_a_group_reaches_its_member_and_narrowing_asks_nothing(
    nextcloud: Nextcloud,
) -> None:
    """admin shares a folder with the group `family` to edit; alice (a member) sees it in her
    shared-with-me list; taking the edit rights back does not ask, giving them again does."""
    nextcloud.make_folder(nextcloud.admin, "Holiday")
    nextcloud.add_group("family", "alice")
    human = Human()
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            share = structured(
                await session.call_tool(
                    "nc_share_create",
                    {"path": "Holiday", "kind": "group", "share_with": "family", "rights": "edit"},
                )
            )
            assert human.questions[0] == (
                "Share the folder /Holiday with the group family, to read and change "
                "(read, update, create, delete), with no end date?"
            )
            narrowed = structured(
                await session.call_tool("nc_share_update", {"share_id": share["id"], "rights": "read"})
            )
            assert narrowed["rights"] == ["read"]
            assert len(human.questions) == 1
            widened = structured(
                await session.call_tool("nc_share_update", {"share_id": share["id"], "rights": "edit"})
            )
            assert "update" in widened["rights"]
            assert len(human.questions) == 2
            assert "(more rights than now)" in human.questions[1]
    with running_app(nextcloud.settings(nextcloud.alice)) as base:
        async with http_session(f"{base}/mcp") as session:
            mine = structured(await session.call_tool("nc_share_list_shared_with_me", {}))
    [received] = mine["shares"]
    assert (received["path"], received["kind"], received["share_with"]) == ("/Holiday", "group", "family")


async def test_refused_share_input_changes_nothing(nextcloud: Nextcloud) -> None:
    """An expiry in the past, an unknown user and a missing path are refused with a clear line;
    the unknown user and path come from Nextcloud's own message after the approval."""
    nextcloud.make_folder(nextcloud.admin, "Taxes")
    human = Human()
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            past = await session.call_tool(
                "nc_share_create", {"path": "Taxes", "kind": "link", "expire_date": "2020-01-01"}
            )
            nobody = await session.call_tool(
                "nc_share_create", {"path": "Taxes", "kind": "user", "share_with": "nobody"}
            )
            missing = await session.call_tool("nc_share_create", {"path": "Nope", "kind": "link"})
    assert past.is_error
    assert "after today" in past.content[0].text
    assert nobody.is_error
    assert "valid account" in nobody.content[0].text
    assert missing.is_error
    assert "/Nope" in missing.content[0].text
    assert nextcloud.shares(nextcloud.admin) == []


@pytest.mark.parametrize(
    ("first", "then", "said"),
    [
        ("Corr3ct-Horse-7", "Other-Horse-8", "a new password"),
        (None, "Corr3ct-Horse-7", "a password where there was none"),
        ("Corr3ct-Horse-7", "", "no password"),
    ],
    ids=["changed", "set", "removed"],
)
async def test_changing_setting_or_removing_a_link_password_asks_and_a_decline_keeps_it(
    nextcloud: Nextcloud, first: str | None, then: str, said: str
) -> None:
    """A new password hands the link to whoever is told it and locks out everyone holding the
    old one; a first password locks out everyone holding the link: each asks, like removing one."""
    nextcloud.make_folder(nextcloud.admin, "Taxes")
    link = {"path": "Taxes", "kind": "link", **({"password": first} if first else {})}
    with running_app(nextcloud.settings(confirm_destructive=False)) as base:
        async with http_session(f"{base}/mcp") as session:
            created = structured(await session.call_tool("nc_share_create", link))
    [before] = nextcloud.shares(nextcloud.admin)
    human = Human(approve=False)
    with running_app(nextcloud.settings()) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            args = {"share_id": created["id"], "password": then}
            declined = await session.call_tool("nc_share_update", args)
    assert declined.is_error
    assert "declined" in declined.content[0].text  # type: ignore[union-attr]
    [question] = human.questions
    assert question.startswith("Give anyone with the link")
    assert said in question
    [after] = nextcloud.shares(nextcloud.admin)
    assert after["password"] == before["password"]
