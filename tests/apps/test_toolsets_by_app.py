"""A toolset of a Nextcloud app is offered only to a user who has the app, through the SDK client
against the real Nextcloud 29 and 34, with and without the apps (docs/ADR/0042-toolsets-by-app.md).

The app toolsets live in modules of their own; here two small toolsets stand in for them, named
as the table names them: `deck` (the Deck app, on the apps instances only) and `tags` (system
tags, part of every Nextcloud)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import ClientSession
from mcp.server.mcpserver import Context

import nextcloud_mcp_server.tools as tools_module
from nextcloud_mcp_server.auth.scopes import NOTES_READ, require_scopes
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app

pytestmark = pytest.mark.integration

deck = Toolset("deck")
tags = Toolset("tags")


@deck.tool(title="Who am I (Deck)", read_only=True)
@require_scopes(NOTES_READ)
async def nc_deck_whoami(ctx: Context) -> str:
    """The caller's Nextcloud user id."""
    return (await nextcloud_for(ctx)).user_id


@tags.tool(title="Who am I (tags)", read_only=True)
@require_scopes(NOTES_READ)
async def nc_tags_whoami(ctx: Context) -> str:
    """The caller's Nextcloud user id."""
    return (await nextcloud_for(ctx)).user_id


@pytest.fixture(autouse=True)
def _stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-ins join the tools of the toolsets they are named after."""
    real, real_index = tools_module.toolset_tools, tools_module.indexed
    extra = {"deck": deck.specs, "tags": tags.specs}
    monkeypatch.setattr(tools_module, "toolset_tools", lambda name: [*real(name), *extra.get(name, [])])
    # what a server serves comes from the index (ADR 0093); a `ToolSpec` there is built at start
    monkeypatch.setattr(tools_module, "indexed", lambda name: (*real_index(name), *extra.get(name, [])))


def _settings(nextcloud: Nextcloud, login: Any = None, **more: Any) -> Settings:
    return nextcloud.settings(login or nextcloud.alice, nextcloud_mcp_toolsets="all", **more)


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[str]:
    settings: Settings = request.param
    with running_app(settings) as base:
        yield f"{base}/mcp"


async def _names(session: ClientSession) -> set[str]:
    return {tool.name for tool in (await session.list_tools()).tools}


async def _text(session: ClientSession, name: str) -> tuple[bool, str]:
    result = await session.call_tool(name, {})
    text = " ".join(getattr(part, "text", "") for part in result.content)
    return bool(result.is_error), text


async def test_a_user_with_the_apps_sees_their_toolsets(apps_nextcloud: Nextcloud) -> None:
    with running_app(_settings(apps_nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            names = await _names(session)
            assert {"nc_deck_whoami", "nc_tags_whoami", "nc_notes_get_note"} <= names
            assert await _text(session, "nc_deck_whoami") == (False, "alice")


async def test_without_the_app_its_tools_are_neither_listed_nor_run(each_real_nextcloud: Nextcloud) -> None:
    with running_app(_settings(each_real_nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            names = await _names(session)
            assert "nc_deck_whoami" not in names
            assert {"nc_tags_whoami", "nc_notes_get_note", "nc_webdav_read_file"} <= names
            failed, text = await _text(session, "nc_deck_whoami")
            assert failed
            assert "Deck is not installed or not enabled for you on this Nextcloud" in text
            assert "alice" not in text  # the tool body did not run


async def _until(session: ClientSession, wanted: bool, name: str, deadline: float = 30.0) -> None:
    """Poll `tools/list` until `name` is (`wanted`) listed; the cache lives a second."""
    end = time.monotonic() + deadline
    while (name in await _names(session)) != wanted:
        assert time.monotonic() < end, f"{name} still {'absent' if wanted else 'listed'}"


async def test_an_app_taken_from_a_user_goes_when_the_cache_expires(apps_nextcloud: Nextcloud) -> None:
    """Deck restricted to the admin group: gone for alice, still there for the admin."""
    assert apps_nextcloud.instance is not None
    quick = {"nextcloud_apps_cache_seconds": 1.0}
    with (
        running_app(_settings(apps_nextcloud, **quick)) as alice,
        running_app(_settings(apps_nextcloud, apps_nextcloud.admin, **quick)) as admin,
    ):
        async with http_session(f"{alice}/mcp") as as_alice, http_session(f"{admin}/mcp") as as_admin:
            assert "nc_deck_whoami" in await _names(as_alice)
            apps_nextcloud.instance.occ("app:enable", "--groups", "admin", "deck")
            await _until(as_alice, False, "nc_deck_whoami")
            failed, text = await _text(as_alice, "nc_deck_whoami")
            assert failed
            assert "Deck is not installed or not enabled for you" in text
            assert "nc_deck_whoami" in await _names(as_admin)
            assert await _text(as_admin, "nc_deck_whoami") == (False, "admin")
            apps_nextcloud.instance.occ("config:app:set", "deck", "enabled", "--value=yes")  # everyone
            await _until(as_alice, True, "nc_deck_whoami")


async def test_a_core_app_disabled_goes_too(each_real_nextcloud: Nextcloud) -> None:
    assert each_real_nextcloud.instance is not None
    with running_app(_settings(each_real_nextcloud, nextcloud_apps_cache_seconds=1.0)) as base:
        async with http_session(f"{base}/mcp") as session:
            assert "nc_tags_whoami" in await _names(session)
            each_real_nextcloud.instance.occ("app:disable", "systemtags")
            await _until(session, False, "nc_tags_whoami")


async def test_when_nextcloud_cannot_be_asked_nothing_is_hidden(each_real_nextcloud: Nextcloud) -> None:
    """A Nextcloud that does not answer: the chosen toolsets are listed as they are, and a call
    says that Nextcloud cannot be reached."""
    closed = _settings(each_real_nextcloud, nextcloud_host="http://127.0.0.1:9")
    with running_app(closed) as base:
        async with http_session(f"{base}/mcp") as session:
            assert {"nc_deck_whoami", "nc_tags_whoami"} <= await _names(session)
            failed, text = await _text(session, "nc_notes_list_notes")
            assert failed
            assert "127.0.0.1:9" in text


async def test_nothing_is_asked_at_start_and_each_user_once(double: Any, settings: Settings) -> None:
    """The double has no navigation endpoint: Nextcloud cannot say, so nothing is hidden; the
    question is asked at the first `tools/list`, not at start, and not again at the second."""

    def asked() -> int:
        return sum(1 for r in double.requests if r.path == "/ocs/v2.php/core/navigation/apps")

    every = settings.model_copy(update={"nextcloud_mcp_toolsets": "all"})
    with running_app(every) as base:
        async with http_session(f"{base}/mcp") as session:
            assert asked() == 0
            assert "nc_deck_whoami" in await _names(session)
            assert "nc_deck_whoami" in await _names(session)
            assert asked() == 1


async def test_the_default_never_asks(double: Any, settings: Settings) -> None:
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            names = await _names(session)
            assert "nc_deck_whoami" not in names
            assert len(names) == 42  # the default toolsets' 40, nc_toolsets and nc_call_tool
    assert not [r for r in double.requests if r.path == "/ocs/v2.php/core/navigation/apps"]
