"""Typed views of what the Deck app returns (REST `/index.php/apps/deck/api/v1.0`, OCS comments
and overview). Seen on Deck 1.13.10 (Nextcloud 29) and 1.18.3 (Nextcloud 34); unknown fields are
ignored and fields that are null on one version have defaults, so both parse alike."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from nextcloud_mcp_server.nextcloud.models import AppModel

__all__ = [
    "DeckAssignment",
    "DeckBoard",
    "DeckBoardRef",
    "DeckCard",
    "DeckComment",
    "DeckLabel",
    "DeckStack",
    "DeckUser",
]


class DeckUser(AppModel):
    uid: str = ""
    displayname: str = ""


class DeckAcl(AppModel):
    """One entry of a board's sharing: a user (type 0), a group (1) or a team (7)."""

    participant: DeckUser = Field(default_factory=DeckUser)
    type: int = 0

    @field_validator("participant", mode="before")
    @classmethod
    def _participant(cls, value: Any) -> Any:
        return {"uid": value, "displayname": value} if isinstance(value, str) else value


class DeckLabel(AppModel):
    id: int
    title: str = ""
    color: str = ""


class DeckBoardRef(AppModel):
    id: int = 0
    title: str = ""


class DeckAssignment(AppModel):
    """One user (or group) assigned to a card; `participant` names them."""

    participant: DeckUser = Field(default_factory=DeckUser)
    type: int = 0


class DeckCard(AppModel):
    id: int
    title: str = ""
    description: str | None = None
    stack_id: int = Field(default=0, alias="stackId")
    type: str = "plain"
    order: int = 0
    archived: bool = False
    done: str | None = None  # when it was marked done (ISO 8601), Deck >= 1.12
    duedate: str | None = None  # ISO 8601 with offset
    labels: list[DeckLabel] = Field(default_factory=list)
    assigned_users: list[DeckAssignment] = Field(default_factory=list, alias="assignedUsers")
    owner: DeckUser = Field(default_factory=DeckUser)
    last_modified: int = Field(default=0, alias="lastModified")
    deleted_at: int = Field(default=0, alias="deletedAt")
    comments_count: int = Field(default=0, alias="commentsCount")
    etag: str = Field(default="", alias="ETag")
    # Only in `overview/upcoming` (CardDetails): where the card lives.
    board_id: int | None = Field(default=None, alias="boardId")
    board: DeckBoardRef | None = None
    # Deck 1.18 only; its card update resets them unless they are sent back.
    startdate: str | None = None
    color: str | None = None

    @field_validator("labels", "assigned_users", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("board", mode="before")
    @classmethod
    def _board(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else None

    @field_validator("owner", mode="before")
    @classmethod
    def _owner(cls, value: Any) -> Any:
        # A plain user id on some answers (create on older Deck), an object on others.
        return {"uid": value, "displayname": value} if isinstance(value, str) else value


class DeckStack(AppModel):
    id: int
    title: str = ""
    board_id: int = Field(default=0, alias="boardId")
    order: int = 0
    cards: list[DeckCard] = Field(default_factory=list)
    etag: str = Field(default="", alias="ETag")

    @field_validator("cards", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


class DeckBoard(AppModel):
    id: int
    title: str = ""
    color: str = ""
    archived: bool = False
    owner: DeckUser = Field(default_factory=DeckUser)
    labels: list[DeckLabel] = Field(default_factory=list)
    users: list[DeckUser] = Field(default_factory=list)
    acl: list[DeckAcl] = Field(default_factory=list)
    stacks: list[DeckStack] = Field(default_factory=list)
    deleted_at: int = Field(default=0, alias="deletedAt")
    last_modified: int = Field(default=0, alias="lastModified")
    permissions: dict[str, bool] = Field(default_factory=dict)
    etag: str = Field(default="", alias="ETag")

    @field_validator("labels", "users", "acl", "stacks", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("permissions", mode="before")
    @classmethod
    def _permissions(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else {}

    def can(self, permission: str) -> bool:
        """`PERMISSION_READ`, `_EDIT`, `_MANAGE` or `_SHARE` for the caller."""
        return bool(self.permissions.get(f"PERMISSION_{permission.upper()}", False))


class DeckComment(AppModel):
    id: int
    message: str = ""
    actor_id: str = Field(default="", alias="actorId")
    actor_display_name: str = Field(default="", alias="actorDisplayName")
    created: str = Field(default="", alias="creationDateTime")
