"""Typed views of what Nextcloud returns. Unknown fields are ignored, so newer servers still parse."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = [
    "FIRST_YEAR",
    "LAST_TIMESTAMP",
    "LAST_YEAR",
    "AppModel",
    "Calendar",
    "CalendarObject",
    "CurrentUser",
    "FileEntry",
    "FrozenAppModel",
    "Note",
    "NoteSettings",
    "NotesCapability",
    "ServerStatus",
    "UnixTime",
    "plain_text",
]


class AppModel(BaseModel):
    """The base of every typed answer, Nextcloud's and its apps': fields Nextcloud adds later are
    ignored, and a field is filled by its alias (Nextcloud's name) or by its own name."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class FrozenAppModel(AppModel):
    """An `AppModel` that cannot be changed once read (and so can be hashed)."""

    model_config = ConfigDict(frozen=True)


def plain_text(value: Any) -> str:
    """A text field of an answer as plain text: a string as it is, a number as its digits, and
    anything else an app may send in its place (null, a list, an object, true or false) as ""."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return ""


# 9999-12-31T23:59:59Z: the last second an ISO 8601 date (and Python's datetime) can show.
LAST_TIMESTAMP = 253_402_300_799
# The years a date given to a tool or in a URI may fall in: the ranges, slacks and days added
# around it stay inside what Python's dates hold (year 1 minus a day, or 9999 plus one, overflowed).
FIRST_YEAR, LAST_YEAR = 1000, 9998


def _in_calendar(value: int) -> int:
    return min(max(value, 0), LAST_TIMESTAMP)


# A Unix time an app sent, moved into what a date can show (1970 to 9999): 10**12 made
# `fromtimestamp` raise ValueError, 10**20 OverflowError, and one such date failed its answer.
UnixTime = Annotated[int, AfterValidator(_in_calendar)]


class Note(AppModel):
    """A note of the Notes app (API v1). `content` is absent when a listing excluded it."""

    id: int
    title: str = ""
    category: str = ""
    favorite: bool = False
    readonly: bool = False
    modified: int = Field(default=0, ge=0, le=LAST_TIMESTAMP, description="Unix time of the last change")
    etag: str = ""
    content: str | None = None


class NoteSettings(AppModel):
    notes_path: str = Field(default="Notes", alias="notesPath")
    file_suffix: str = Field(default=".md", alias="fileSuffix")
    custom_suffix: str = Field(default="", alias="customSuffix")


class CurrentUser(AppModel):
    """OCS `cloud/user`: who the credential belongs to."""

    id: str
    display_name: str = Field(default="", alias="display-name")
    email: str | None = None


class ServerStatus(AppModel):
    """`/status.php`, readable without credentials."""

    installed: bool = False
    maintenance: bool = False
    needs_db_upgrade: bool = Field(default=False, alias="needsDbUpgrade")
    version: str = ""
    versionstring: str = ""
    productname: str = "Nextcloud"


class NotesCapability(AppModel):
    """The `notes` entry of OCS capabilities: present only when the Notes app is enabled."""

    api_version: list[str] = Field(default_factory=list)
    version: str = ""


@dataclass(slots=True)
class FileEntry:
    """A file or folder in the user's files. `path` is relative to the files root ('' = root).

    A plain dataclass, not a model: this code builds every one from a DAV answer it has already
    read field by field, so there is nothing left to validate, and a listing builds thousands
    (pydantic's validation was a fifth of a 10,000-entry listing's CPU; ADR 0110). Not frozen,
    as the model was not: a frozen dataclass takes three times as long to build. Kept listings
    share their entries between calls, so nothing changes one after it is built."""

    path: str
    name: str
    kind: Literal["file", "directory"]
    size: int | None = None
    modified: datetime | None = None
    etag: str | None = None
    mime: str | None = None
    file_id: int | None = None


class Calendar(AppModel):
    """A calendar collection of the user (not the inbox, outbox, trash bin or deleted ones)."""

    id: str
    href: str
    display_name: str
    color: str | None = None
    components: list[str] = Field(default_factory=list)
    writable: bool = True
    default: bool = False  # the user's default calendar (the principal's schedule-default-calendar-URL)
    ctag: str = ""  # getctag: changes with every change in the calendar (Nextcloud: its sync token)


class CalendarObject(AppModel):
    """One iCalendar resource (an event or a task, with its overrides) and its ETag."""

    href: str
    etag: str
    ics: str
