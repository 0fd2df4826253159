"""The Deck app: boards, stacks, cards (REST `/index.php/apps/deck/api/v1.0`), and comments and
upcoming cards (OCS `/ocs/v2.php/apps/deck/api/v1.0`). Knows nothing of MCP.

Behaviour taken from the real Deck 1.13.10 (Nextcloud 29) and 1.18.3 (Nextcloud 34):
- A card that does not exist answers 403 "Permission denied", like one on a board not shared
  with the caller; a label of another board answers 500 "Label does not exist".
- A card is addressed under a board and a stack, but Deck reads only the card id from the path,
  except that an update moves the card to the stack named in the path. So every update re-reads
  the card and writes it back to the stack it is in.
- The card update (PUT) replaces every field: what is not sent is cleared (`done`, and on 1.18
  `startdate` and `color`). `update_card` sends back every field as it was read.
- `If-Modified-Since` on the board and stack listings fails with HTTP 500 on Deck 1.13.10, so it is
  not used. Boards and cards carry an ETag (md5 of their last change, so one per second), which
  destructive actions compare before and after asking.
- Without Deck (not installed, or not enabled for the user) the REST paths answer Nextcloud's own
  404 page, not JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from nextcloud_mcp_server.nextcloud import etags
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.errors import (
    Forbidden,
    InvalidResponse,
    NextcloudHTTPError,
    NotFound,
    Unauthorized,
    error_for_status,
)
from nextcloud_mcp_server.nextcloud.http import Answer, NextcloudHTTP, json_body
from nextcloud_mcp_server.toolsets.deck.models import DeckBoard, DeckCard, DeckComment, DeckLabel, DeckStack

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = ["DECK_MISSING", "UPCOMING_GROUPS", "DeckAppMissing", "DeckClient"]

API = "/index.php/apps/deck/api/v1.0"
OCS = "/ocs/v2.php/apps/deck/api/v1.0"
DECK_MISSING = "Deck is not installed or not enabled for you on this Nextcloud"
_HEADERS = {"OCS-APIRequest": "true", "Accept": "application/json"}
_BEARER_REFUSED = "CORS requires basic auth"
# The groups of `overview/upcoming`, soonest first; `nodue` (Deck 1.18 only) is left out.
UPCOMING_GROUPS = ("overdue", "today", "tomorrow", "nextSevenDays", "later")

M = TypeVar("M", bound=BaseModel)


class DeckAppMissing(NotFound):
    """Deck's paths answered Nextcloud's own 404 page: no Deck for this user."""


def _said(body: str) -> str:
    """Deck's own sentence from an error body (`{"status":403,"message":"..."}`), or ''."""
    try:
        message = TypeAdapter(dict[str, Any]).validate_json(body).get("message")
    except ValidationError:
        return ""
    return str(message)[:300] if isinstance(message, str) else ""


class DeckClient:
    """The Deck API for one user."""

    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._http = http
        self._credential = credential
        if getattr(credential, "basic_for_notes", False) and credential is not None:
            self._credential = credential.basic_fallback() or credential

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    @property
    def host(self) -> str:
        return self._http.host

    def web_url(self, board_id: int, card_id: int | None = None) -> str:
        """Where a person opens the board (or the card) in Deck's web page (1.13 and 1.18 alike)."""
        card = f"/card/{card_id}" if card_id is not None else ""
        return self._http.url(f"/index.php/apps/deck/board/{board_id}{card}")

    async def _send(self, method: str, path: str, *, params: dict[str, Any] | None, body: Any) -> Answer:
        try:
            return await self._http.request(
                method, path, credential=self._credential, params=params, headers=_HEADERS, json=body
            )
        except Unauthorized as exc:
            # Nextcloud 29 refuses Bearer on app APIs marked @CORS (as for Notes) but takes the
            # token as a Basic password.
            fallback = self._credential.basic_fallback() if self._credential is not None else None
            if _BEARER_REFUSED not in exc.body or fallback is None:
                raise
            self._credential = fallback
            return await self._http.request(
                method, path, credential=fallback, params=params, headers=_HEADERS, json=body
            )

    async def _call(
        self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None
    ) -> Answer:
        """A REST call; Deck's refusals become errors that say what Deck said."""
        try:
            return await self._send(method, f"{API}{path}", params=params, body=body)
        except NextcloudHTTPError as exc:
            raise self._refusal(exc) from None

    async def _ocs(
        self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None
    ) -> Any:
        """An OCS call: its `ocs.data`."""
        try:
            answer = await self._send(
                method, f"{OCS}{path}", params={"format": "json", **(params or {})}, body=body
            )
        except NextcloudHTTPError as exc:
            raise self._refusal(exc) from None
        payload = json_body(answer, self.host)
        try:
            return payload["ocs"]["data"]
        except (KeyError, TypeError):
            raise InvalidResponse(self.host, "the OCS answer has no ocs.data") from None

    def _refusal(self, exc: NextcloudHTTPError) -> NextcloudHTTPError:
        said = _said(exc.body)
        if exc.status == 404 and not exc.body.lstrip().startswith("{"):
            return DeckAppMissing(self.host, DECK_MISSING, status=404, body=exc.body)
        if exc.status == 403 and said in ("", "Permission denied"):
            said = "permission denied: it does not exist, or it is not shared with you with that permission"
        if not said or exc.status in (401, 429):
            return exc
        return error_for_status(self.host, exc.status, exc.body, f"Deck refused: {said}")

    def _parse(self, model: type[M], payload: Any, what: str) -> M:
        try:
            return model.model_validate(payload)
        except ValidationError:
            raise InvalidResponse(self.host, f"Deck's answer is not a {what}") from None

    def _parse_list(self, model: type[M], payload: Any, what: str) -> list[M]:
        if not isinstance(payload, list):
            raise InvalidResponse(self.host, f"Deck's answer is not a list of {what}")
        return [self._parse(model, item, what) for item in payload]

    # --- boards

    async def boards(self) -> list[DeckBoard]:
        answer = await self._call("GET", "/boards")
        return self._parse_list(DeckBoard, json_body(answer, self.host), "board")

    async def board(self, board_id: int) -> DeckBoard:
        """One board with its labels, members and stacks (without cards), and its ETag."""
        answer = await self._call("GET", f"/boards/{board_id}")
        board = self._parse(DeckBoard, json_body(answer, self.host), "board")
        return board.model_copy(update={"etag": board.etag or etags.plain(answer.headers.get("ETag"))})

    async def delete_board(self, board_id: int) -> None:
        await self._call("DELETE", f"/boards/{board_id}")

    async def create_board(self, title: str, color: str) -> DeckBoard:
        """A new board of the caller's; Deck gives it its default labels and no stacks."""
        answer = await self._call("POST", "/boards", body={"title": title, "color": color})
        return self._parse(DeckBoard, json_body(answer, self.host), "board")

    async def update_board(self, board: DeckBoard, *, title: str | None, archived: bool | None) -> DeckBoard:
        """Rename or (un)archive; Deck's update takes every field (`archived` defaults to false, so
        it is always sent as it was read unless changed)."""
        body = {
            "title": board.title if title is None else title,
            "color": board.color or "0082c9",
            "archived": board.archived if archived is None else archived,
        }
        answer = await self._call("PUT", f"/boards/{board.id}", body=body)
        return self._parse(DeckBoard, json_body(answer, self.host), "board")

    async def create_stack(self, board_id: int, title: str, order: int) -> DeckStack:
        answer = await self._call("POST", f"/boards/{board_id}/stacks", body={"title": title, "order": order})
        return self._parse(DeckStack, json_body(answer, self.host), "stack")

    async def rename_stack(self, board_id: int, stack: DeckStack, title: str) -> None:
        """Deck's stack update takes the board from the path (it would move the stack there) and
        the order as sent, so both are the stack's own."""
        body = {"title": title, "order": stack.order}
        await self._call("PUT", f"/boards/{board_id}/stacks/{stack.id}", body=body)

    async def rename_label(self, board_id: int, label: DeckLabel, title: str) -> None:
        body = {"title": title, "color": label.color or "31CC7C"}
        await self._call("PUT", f"/boards/{board_id}/labels/{label.id}", body=body)

    async def delete_stack(self, board_id: int, stack_id: int) -> None:
        """Deck marks the stack and its cards deleted (1.13 and 1.18)."""
        await self._call("DELETE", f"/boards/{board_id}/stacks/{stack_id}")

    async def delete_label(self, board_id: int, label_id: int) -> None:
        """The label goes, and with it from every card that carried it."""
        await self._call("DELETE", f"/boards/{board_id}/labels/{label_id}")

    async def create_label(self, board_id: int, title: str, color: str) -> DeckLabel:
        answer = await self._call("POST", f"/boards/{board_id}/labels", body={"title": title, "color": color})
        return self._parse(DeckLabel, json_body(answer, self.host), "label")

    async def stacks(self, board_id: int) -> list[DeckStack]:
        """The board's stacks with their cards (archived cards are not included)."""
        answer = await self._call("GET", f"/boards/{board_id}/stacks")
        stacks = self._parse_list(DeckStack, json_body(answer, self.host), "stack")
        return sorted(stacks, key=lambda s: (s.order, s.id))

    async def archived_stacks(self, board_id: int) -> list[DeckStack]:
        """The board's stacks with their archived cards only."""
        answer = await self._call("GET", f"/boards/{board_id}/stacks/archived")
        stacks = self._parse_list(DeckStack, json_body(answer, self.host), "stack")
        return sorted(stacks, key=lambda s: (s.order, s.id))

    async def stack_of(self, stack_id: int) -> DeckStack:
        """A stack by its id alone (Deck reads only the stack id from the path), for its board."""
        answer = await self._call("GET", f"/boards/0/stacks/{stack_id}")
        return self._parse(DeckStack, json_body(answer, self.host), "stack")

    # --- cards

    def _card_path(self, board_id: int, stack_id: int, card_id: int) -> str:
        return f"/boards/{board_id}/stacks/{stack_id}/cards/{card_id}"

    async def card(self, board_id: int, stack_id: int, card_id: int) -> DeckCard:
        answer = await self._call("GET", self._card_path(board_id, stack_id, card_id))
        card = self._parse(DeckCard, json_body(answer, self.host), "card")
        return card.model_copy(update={"etag": card.etag or etags.plain(answer.headers.get("ETag"))})

    async def create_card(
        self, board_id: int, stack_id: int, *, title: str, description: str, duedate: str | None
    ) -> DeckCard:
        body = {"title": title, "type": "plain", "order": 999, "description": description, "duedate": duedate}
        answer = await self._call("POST", f"/boards/{board_id}/stacks/{stack_id}/cards", body=body)
        return self._parse(DeckCard, json_body(answer, self.host), "card")

    async def update_card(
        self,
        board_id: int,
        card: DeckCard,
        *,
        duedate: str | None,
        order: int | None = None,
        title: str | None = None,
        description: str | None = None,
        done: str | bool | None = False,
        archived: bool | None = None,
        to_stack: int | None = None,
    ) -> DeckCard:
        """Write `card` back as read, with `duedate` (None clears it), and `order`, `title`,
        `description`, `done` (a time, None to clear; False keeps the card's) and `archived` if
        given. The card stays in its stack unless `to_stack` names another, of any board the caller
        may edit: Deck then moves the card's labels to the labels of that board with the same
        titles (creating those missing when the caller manages that board)."""
        body: dict[str, Any] = {
            "title": card.title if title is None else title,
            "type": card.type,
            "owner": card.owner.uid,
            "description": (card.description or "") if description is None else description,
            "order": card.order if order is None else order,
            "duedate": duedate,
            "done": card.done if done is False else done,
        }
        if card.startdate is not None:
            body["startdate"] = card.startdate
        if card.color is not None:
            body["color"] = card.color
        if archived is not None:
            # only when it changes: Deck refuses to archive a card that is archived already
            body["archived"] = archived
        path = self._card_path(board_id, to_stack or card.stack_id, card.id)
        answer = await self._call("PUT", path, body=body)
        payload = json_body(answer, self.host)
        updated = self._parse(DeckCard, payload, "card")
        if isinstance(payload, dict) and payload.get("assignedUsers") is None:
            # Deck 1.13 answers the update without the assigned users; the update leaves them
            updated = updated.model_copy(update={"assigned_users": card.assigned_users})
        return updated

    async def move_card(self, board_id: int, card: DeckCard, *, to_stack: int, position: int) -> DeckCard:
        """Move `card` (as read) to `position` (0 = top) in `to_stack`; the other cards shift down.

        Deck answers the reorder with the stack's cards, without their labels and users: the moved
        card is the one given with its new place taken from that answer (nothing is read back).
        Deck 1.13 renumbers the stack around a free `position` but compares the card id from the
        path (a string) with `===`, so the card itself keeps its rank among the others; when that
        rank is not the one asked, a card update puts it into the free place (Deck 1.18 places it
        right away)."""
        # The target stack in the path too: Deck's request parameters take the path's value.
        path = f"{self._card_path(board_id, to_stack, card.id)}/reorder"
        answer = await self._call("PUT", path, body={"stackId": to_stack, "order": position})
        cards = self._parse_list(DeckCard, json_body(answer, self.host), "card")
        ranked = sorted(cards, key=lambda c: (c.order, c.id))
        rank = next((i for i, c in enumerate(ranked) if c.id == card.id), None)
        if rank is None:  # not in Deck's answer: read where it is
            moved = await self.card(board_id, to_stack, card.id)
            placed = moved.order == position
        else:
            now = ranked[rank]
            update = {"stack_id": now.stack_id, "order": now.order, "last_modified": now.last_modified}
            moved = card.model_copy(update={**update, "etag": now.etag or card.etag})
            placed = rank == min(position, len(ranked) - 1)
        if not placed:
            moved = await self.update_card(board_id, moved, duedate=moved.duedate, order=position)
        return moved

    async def delete_card(self, board_id: int, stack_id: int, card_id: int) -> None:
        await self._call("DELETE", self._card_path(board_id, stack_id, card_id))

    async def set_user(self, board_id: int, card: DeckCard, user_id: str, *, assigned: bool) -> None:
        verb = "assignUser" if assigned else "unassignUser"
        path = f"{self._card_path(board_id, card.stack_id, card.id)}/{verb}"
        await self._call("PUT", path, body={"userId": user_id})

    async def set_label(self, board_id: int, card: DeckCard, label_id: int, *, on: bool) -> None:
        verb = "assignLabel" if on else "removeLabel"
        path = f"{self._card_path(board_id, card.stack_id, card.id)}/{verb}"
        await self._call("PUT", path, body={"labelId": label_id})

    # --- comments and the overview (OCS)

    async def comments(self, card_id: int, *, limit: int, offset: int) -> list[DeckComment]:
        """Newest first, as Deck pages them."""
        params = {"limit": limit, "offset": offset}
        data = await self._card_ocs(card_id, "GET", f"/cards/{card_id}/comments", params=params)
        return self._parse_list(DeckComment, data, "comment")

    async def add_comment(self, card_id: int, message: str) -> DeckComment:
        body = {"message": message, "parentId": 0}
        data = await self._card_ocs(card_id, "POST", f"/cards/{card_id}/comments", body=body)
        return self._parse(DeckComment, data, "comment")

    async def _card_ocs(self, card_id: int, method: str, path: str, **kwargs: Any) -> Any:
        """An OCS call about one card: Deck's comments answer 403 or OCS's generic 404 for a card
        that does not exist or is not shared with the caller; both are said with the card's id."""
        try:
            return await self._ocs(method, path, **kwargs)
        except (NotFound, Forbidden) as exc:
            said = f"card {card_id} does not exist, or it is not shared with you"
            raise type(exc)(self.host, said, status=exc.status, body=exc.body) from None

    async def upcoming(self) -> dict[str, list[DeckCard]]:
        """The caller's cards with a due date, by group (`UPCOMING_GROUPS`)."""
        data = await self._ocs("GET", "/overview/upcoming")
        if isinstance(data, list) and not data:
            data = {}  # PHP's empty array
        if not isinstance(data, dict):
            raise InvalidResponse(self.host, "Deck's upcoming cards are not grouped")
        return {group: self._parse_list(DeckCard, data.get(group) or [], "card") for group in UPCOMING_GROUPS}
