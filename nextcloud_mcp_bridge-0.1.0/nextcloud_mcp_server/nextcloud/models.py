"""Typed views of what Nextcloud returns. Unknown fields are ignored, so newer servers still parse."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Calendar",
    "CalendarObject",
    "CurrentUser",
    "FileEntry",
    "Note",
    "NoteSettings",
    "NotesCapability",
    "ServerStatus",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


# 9999-12-31T23:59:59Z: the last second an ISO 8601 date (and Python's datetime) can show.
LAST_TIMESTAMP = 253_402_300_799


class Note(_Model):
    """A note of the Notes app (API v1). `content` is absent when a listing excluded it."""

    id: int
    title: str = ""
    category: str = ""
    favorite: bool = False
    readonly: bool = False
    modified: int = Field(default=0, ge=0, le=LAST_TIMESTAMP, description="Unix time of the last change")
    etag: str = ""
    content: str | None = None


class NoteSettings(_Model):
    notes_path: str = Field(default="Notes", alias="notesPath")
    file_suffix: str = Field(default=".md", alias="fileSuffix")
    custom_suffix: str = Field(default="", alias="customSuffix")


class CurrentUser(_Model):
    """OCS `cloud/user`: who the credential belongs to."""

    id: str
    display_name: str = Field(default="", alias="display-name")
    email: str | None = None


class ServerStatus(_Model):
    """`/status.php`, readable without credentials."""

    installed: bool = False
    maintenance: bool = False
    needs_db_upgrade: bool = Field(default=False, alias="needsDbUpgrade")
    version: str = ""
    versionstring: str = ""
    productname: str = "Nextcloud"


class NotesCapability(_Model):
    """The `notes` entry of OCS capabilities: present only when the Notes app is enabled."""

    api_version: list[str] = Field(default_factory=list)
    version: str = ""


class FileEntry(_Model):
    """A file or folder in the user's files. `path` is relative to the files root ('' = root)."""

    path: str
    name: str
    kind: Literal["file", "directory"]
    size: int | None = None
    modified: datetime | None = None
    etag: str | None = None
    mime: str | None = None
    file_id: int | None = None


class Calendar(_Model):
    """A calendar collection of the user (not the inbox, outbox, trash bin or deleted ones)."""

    id: str
    href: str
    display_name: str
    color: str | None = None
    components: list[str] = Field(default_factory=list)
    writable: bool = True
    default: bool = False  # the user's default calendar (the principal's schedule-default-calendar-URL)
    ctag: str = ""  # getctag: changes with every change in the calendar (Nextcloud: its sync token)


class CalendarObject(_Model):
    """One iCalendar resource (an event or a task, with its overrides) and its ETag."""

    href: str
    etag: str
    ics: str
