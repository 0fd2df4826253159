"""Deck for the deck tests: Deck's own API as alice (another device) to set boards up and check
every change, and this server over streamable HTTP with the deck toolset."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any

import httpx
from mcp import ClientSession

from tests.backends import Nextcloud
from tests.mcp_clients import Human, structured, toolset_session

API = "/index.php/apps/deck/api/v1.0"
OCS = "/ocs/v2.php/apps/deck/api/v1.0"


class Deck:
    """Deck's own API as alice (another device), for setting up and checking."""

    def __init__(self, nextcloud: Nextcloud) -> None:
        self.http = nextcloud.http(nextcloud.alice)

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self.http.request(method, path, **kwargs)
        assert answer.is_success, (method, path, answer.status_code, answer.text[:300])
        return answer.json()

    def board(self, title: str, stacks: tuple[str, ...] = ("To do", "Doing", "Done")) -> dict[str, Any]:
        board = self.call("POST", f"{API}/boards", json={"title": title, "color": "0082c9"})
        board["stack_ids"] = [
            self.call("POST", f"{API}/boards/{board['id']}/stacks", json={"title": t, "order": i})["id"]
            for i, t in enumerate(stacks)
        ]
        return dict(board)

    def card(self, board: dict[str, Any], stack: int, title: str, **fields: Any) -> dict[str, Any]:
        path = f"{API}/boards/{board['id']}/stacks/{stack}/cards"
        return dict(self.call("POST", path, json={"title": title, "type": "plain", "order": 999, **fields}))

    def get_card(self, board_id: int, stack_id: int, card_id: int) -> httpx.Response:
        return self.http.get(f"{API}/boards/{board_id}/stacks/{stack_id}/cards/{card_id}")

    def stacks(self, board_id: int) -> dict[int, list[int]]:
        """Card ids per stack, in the stack's order."""
        found = self.call("GET", f"{API}/boards/{board_id}/stacks")
        return {
            s["id"]: [c["id"] for c in sorted(s.get("cards") or [], key=lambda c: c["order"])] for s in found
        }

    def comments(self, card_id: int) -> list[str]:
        data = self.call("GET", f"{OCS}/cards/{card_id}/comments", params={"format": "json"})
        return [c["message"] for c in data["ocs"]["data"]]


@contextmanager
def deck(nextcloud: Nextcloud) -> Iterator[Deck]:
    api = Deck(nextcloud)
    try:
        yield api
    finally:
        api.http.close()


def session(
    nextcloud: Nextcloud, human: Human | None = None, **settings: Any
) -> AbstractAsyncContextManager[ClientSession]:
    """Alice's session with the deck toolset."""
    return toolset_session(nextcloud, "deck", human, **settings)


async def call(client: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await client.call_tool(tool, arguments))


async def refused(client: ClientSession, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return " ".join(getattr(c, "text", "") for c in result.content)
