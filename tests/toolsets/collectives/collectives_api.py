"""What the collectives tests share: Collectives' own API (to make and check what the toolset
should see), the toolset's session settings and the words of a refusal."""

from __future__ import annotations

from typing import Any

from mcp import ClientSession

from tests.backends import Login, Nextcloud
from tests.mcp_clients import http_session, running_app, structured

__all__ = ["API", "TOO_OLD", "call", "collective", "ocs", "pages_by_title", "said", "settings", "too_old_for"]

API = "/ocs/v2.php/apps/collectives/api/v1.0/collectives"
TOO_OLD = "needs Nextcloud 30 or later"  # on 29: said by every tool, none of them listed


def ocs(nextcloud: Nextcloud, login: Login, method: str, path: str, **body: Any) -> Any:
    with nextcloud.http(login) as http:
        answer = http.request(method, f"{API}{path}", params={"format": "json"}, json=body or None)
    answer.raise_for_status()
    return answer.json()["ocs"]["data"]


def collective(nextcloud: Nextcloud, name: str = "Team Wiki") -> dict[str, Any]:
    """A collective of alice's, made through Collectives' own API, with its landing page."""
    made: dict[str, Any] = ocs(nextcloud, nextcloud.alice, "POST", "", name=name)["collective"]
    [landing] = ocs(nextcloud, nextcloud.alice, "GET", f"/{made['id']}/pages")["pages"]
    return {**made, "landing": landing}


def pages_by_title(nextcloud: Nextcloud, collective_id: int) -> dict[str, dict[str, Any]]:
    """Collectives' own view of the pages, by title."""
    return {p["title"]: p for p in ocs(nextcloud, nextcloud.alice, "GET", f"/{collective_id}/pages")["pages"]}


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await session.call_tool(tool, arguments))


def settings(nextcloud: Nextcloud, **overrides: Any) -> Any:
    return nextcloud.settings(nextcloud.alice, nextcloud_mcp_toolsets="collectives", **overrides)


def said(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def too_old_for(nextcloud: Nextcloud) -> None:
    with running_app(settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            result = await session.call_tool(
                "nc_collectives_edit_page", {"collective_id": 1, "page_id": 1, "etag": "abc", "content": ""}
            )
    assert result.is_error
    assert TOO_OLD in said(result)
