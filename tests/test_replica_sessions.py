"""Session ids that name their replica: `<REPLICA_ID>-...` on the wire, the SDK's own id inside."""

from __future__ import annotations

import httpx
import pytest

from nextcloud_mcp_server.config import ConfigError, Settings, load_settings
from nextcloud_mcp_server.storage.crypto import generate_key
from tests.mcp_clients import INITIALIZE, http_session, running_app

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


async def test_session_ids_carry_the_replica_and_sessions_work_through_them(settings: Settings) -> None:
    with running_app(settings.model_copy(update={"replica_id": "a7"})) as base:
        with httpx.Client(timeout=30) as http:
            opened = http.post(f"{base}/mcp", json=INITIALIZE, headers=HEADERS)
            assert opened.status_code == 200
            session_id = opened.headers["mcp-session-id"]
            assert session_id.startswith("a7-")
            assert len(session_id) > len("a7-") + 16
            # The same session named by another replica's prefix is unknown here: 404, and the
            # client starts anew (what a balancer sending it to the wrong replica would cause).
            inner = session_id.removeprefix("a7-")
            stray = http.post(
                f"{base}/mcp",
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                headers={**HEADERS, "Mcp-Session-Id": f"b-{inner}"},
            )
            assert stray.status_code == 404
        async with http_session(f"{base}/mcp") as session:  # the SDK's client, end to end
            tools = await session.list_tools()
            assert tools.tools


def test_a_replica_id_and_a_store_url_are_checked() -> None:
    key = generate_key()
    assert load_settings(None, replica_id="b", token_encryption_key=key).replica_id == "b"
    for bad in ("A", "a-b", "x" * 17, "a/b"):
        with pytest.raises(ConfigError, match="REPLICA_ID"):
            load_settings(None, replica_id=bad, token_encryption_key=key)
    # every replica must read what another one sealed (a 2026-07-28 call's requestState)
    with pytest.raises(ConfigError, match="REPLICA_ID needs TOKEN_ENCRYPTION_KEY"):
        load_settings(None, replica_id="b")
    with pytest.raises(ConfigError, match="STORE_URL"):
        load_settings(None, store_url="mysql://db/mcp")
    settings = load_settings(None, store_url="postgresql://mcp:pw-in-url@db:5432/mcp")
    assert "pw-in-url" in settings.secrets()  # redacted from logs
    assert "pw-in-url" not in repr(settings)
