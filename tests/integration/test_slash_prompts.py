"""The prompts people use as slash commands (docs/ADR/0077), through real MCP clients: the Python
SDK's and the TypeScript SDK's (what most hosts are built on). Offered only with the toolset whose
tools they name, each names only tools the same client is offered, their arguments are checked,
and `initialize` advertises `prompts` exactly when there are some."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest
from mcp.shared.exceptions import MCPError

from nextcloud_mcp_server.config import Settings
from tests.mcp_clients import http_session, running_app
from tests.ts_client import typescript_client

pytestmark = pytest.mark.integration


def _with(settings: Settings, toolsets: str) -> Settings:
    return settings.model_copy(update={"nextcloud_mcp_toolsets": toolsets})


async def test_the_calendar_prompts_name_only_offered_tools_and_check_their_arguments(
    settings: Settings,
) -> None:
    with running_app(settings) as base:  # the default toolsets: the calendar's prompts, not Deck's
        async with http_session(f"{base}/mcp") as session:
            capabilities = session.server_capabilities
            listed = {p.name: p for p in (await session.list_prompts()).prompts}
            tools = {t.name for t in (await session.list_tools()).tools}
            today = await session.get_prompt("today", {"timezone": "Pacific/Auckland"})
            plain = await session.get_prompt("today", {})
            meeting = await session.get_prompt("find_time", {"duration_minutes": "30", "within_days": "3"})
            refused = {}
            for name, arguments in (
                ("today", {"timezone": "Mars/Olympus"}),
                ("today", {"timezone": "America"}),  # a folder of zones: IsADirectoryError before
                ("find_time", {"duration_minutes": "0"}),
                ("find_time", {"within_days": "1e9"}),
                ("find_time", {"duration_minutes": "3²"}),  # isdigit() takes it; int() does not
                ("find_time", {"within_days": "9" * 5000}),  # past int()'s 4,300 digits
                ("tidy_deck_board", {"board": "Launch"}),
            ):
                with pytest.raises(MCPError) as caught:
                    await session.get_prompt(name, arguments)
                refused[(name, next(iter(arguments.values())))] = str(caught.value)
    assert capabilities is not None
    assert capabilities.prompts is not None
    assert sorted(listed) == ["find_time", "today"]
    assert listed["today"].title == "What's on today"
    assert [a.name for a in listed["find_time"].arguments or []] == [
        "duration_minutes",
        "within_days",
        "timezone",
    ]
    assert not any(a.required for a in listed["today"].arguments or [])
    texts = {}
    for name, result in (("today", today), ("plain", plain), ("meeting", meeting)):
        [message] = result.messages
        assert message.role == "user"
        assert message.content.type == "text"
        texts[name] = message.content.text
        assert set(re.findall(r"nc_\w+", texts[name])) <= tools, texts[name]
    auckland = dt.datetime.now(ZoneInfo("Pacific/Auckland")).date().isoformat()
    assert f"today, {auckland} in Pacific/Auckland" in texts["today"]
    assert "nc_calendar_list_events" in texts["today"]
    assert "ask me for it" in texts["plain"]
    assert "30-minute meeting within the next 3 days" in texts["meeting"]
    assert "IANA time zone" in refused[("today", "Mars/Olympus")]
    assert "IANA time zone" in refused[("today", "America")]
    assert "from 5 to 1440" in refused[("find_time", "0")]
    assert "from 1 to 60" in refused[("find_time", "1e9")]
    assert "from 5 to 1440" in refused[("find_time", "3²")]
    assert "from 1 to 60" in refused[("find_time", "9" * 5000)]
    assert "tidy_deck_board" in refused[("tidy_deck_board", "Launch")]  # not offered without Deck


def test_the_typescript_client_lists_and_gets_the_deck_prompt(settings: Settings) -> None:
    with running_app(_with(settings, "calendar,deck")) as base, typescript_client() as ts:
        ts.open("host", f"{base}/mcp")
        listed = ts.prompts("host")
        tidy = ts.prompt("host", "tidy_deck_board", {"board": "  Launch\n plan  "})
        empty = ts.prompt("host", "tidy_deck_board", {"board": "   "})
        ts.close("host")
    assert "prompts" in listed["capabilities"]
    assert sorted(p["name"] for p in listed["prompts"]) == ["find_time", "tidy_deck_board", "today"]
    [board] = next(p for p in listed["prompts"] if p["name"] == "tidy_deck_board")["arguments"]
    assert (board["name"], board.get("required")) == ("board", True)
    [message] = tidy["result"]["messages"]
    text = message["content"]["text"]
    assert "Deck board 'Launch plan'" in text  # one line, spaces squeezed
    assert "nc_deck_get_board" in text
    assert "delete nothing unless I ask" in text
    assert "board" in empty["error"]["message"]
