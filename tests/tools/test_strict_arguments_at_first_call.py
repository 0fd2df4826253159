"""Each tool's strict arguments model is built at its first call, not at start (ADR 0069); the
schema `tools/list` shows is the one the strict model gives, for every tool of every toolset."""

from __future__ import annotations

from typing import cast

import pytest
from pydantic import ValidationError

from nextcloud_mcp_server import server as server_module
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.server import build_listed, build_server
from nextcloud_mcp_server.tools._arguments import StrictArguments, strict_model
from nextcloud_mcp_server.tools._output_schema import published_input


def test_the_listed_schema_is_the_strict_models_and_the_model_waits_for_a_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # tools are built once per process (server._BUILT): start from none built, as a new process
    monkeypatch.setattr(server_module, "_BUILT", {})
    settings = Settings(nextcloud_host="https://cloud.example.com", nextcloud_mcp_toolsets="all")
    server = build_server(settings, cast(Runtime, None))
    build_listed(server)  # listed from the listing file until built (ADR 0093)
    tools = server._tool_manager.list_tools()
    assert len(tools) >= 80
    assert not [t.name for t in tools if issubclass(t.fn_metadata.arg_model, StrictArguments)]
    differing = [
        t.name
        for t in tools
        if published_input(strict_model(t.fn_metadata.arg_model).model_json_schema(by_alias=True))
        != t.parameters
    ]
    assert differing == []
    first = tools[0]
    with pytest.raises(ValidationError, match="unknown key 'not-a-key'; the known ones are"):
        first.fn_metadata.validate_arguments({"not-a-key": 1})
    assert issubclass(first.fn_metadata.arg_model, StrictArguments)
