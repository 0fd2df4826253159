"""A Deck comment's length as the schema tells the model is Nextcloud's own limit: 1,000
characters on 29 and 34 (1,001 answered 400 "Message exceeds allowed character limit of 1000"
on both, measured with the kit's Deck); the schema once said 4,000."""

from __future__ import annotations

from mcp.server.mcpserver.tools import Tool

from nextcloud_mcp_server.tools import toolset_tools
from nextcloud_mcp_server.toolsets.deck.input import MAX_COMMENT


def test_the_schema_says_the_limit_nextcloud_keeps() -> None:
    [spec] = [spec for spec in toolset_tools("deck") if spec.name == "nc_deck_add_comment"]
    schema = Tool.from_function(spec.fn, name=spec.name).parameters
    assert schema["properties"]["message"]["maxLength"] == MAX_COMMENT == 1000
