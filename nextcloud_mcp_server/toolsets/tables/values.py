"""The Tables app's columns and cell values: what a caller may write into a column, and what a
stored cell means.

Tables (0.9 on Nextcloud 29, 2.2 on 34) does not refuse a value it cannot parse: it stores an
empty cell instead (seen on both: a number column given "abc", a selection given an unknown label,
a date given "tomorrow" all answered 200 with the cell emptied). So every value is checked here,
against the column's type, before anything is sent, and a refusal names the column.

Stored forms (REST API v1, both versions): text is a string; a link is a JSON string
`{"title", "value"}` (older rows: a bare URL); a number is a number; a selection is an option id,
a multi-selection a list of ids, a check box the string "true" or "false"; a date-time is
"YYYY-MM-DD HH:MM", a date "YYYY-MM-DD", a time "HH:MM"; a user/group cell is a list of
`{"id", "type"}` (0 user, 1 group, 2 team).
"""

from __future__ import annotations

import json
import math
import re
from datetime import date, datetime, time
from typing import Any

from pydantic import Field, field_validator

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.models import AppModel
from nextcloud_mcp_server.numbers import json_whole

__all__ = [
    "MAX_TEXT",
    "InvalidTableInput",
    "SelectionOption",
    "TableColumn",
    "encode_value",
    "shown_value",
]

MAX_TEXT = 100_000  # characters of one text cell written through this server
_URL = re.compile(r"https?://[^\s]+", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_USERGROUP_TYPES = {0: "user", 1: "group", 2: "team"}


class InvalidTableInput(InvalidInput):
    """A table, column or value the Tables app would refuse or store wrongly; nothing was sent."""


class SelectionOption(AppModel):
    id: int
    label: str = ""


class TableColumn(AppModel):
    """A column of a table (or of a view, which shows some of its table's columns)."""

    id: int
    title: str = ""
    type: str = ""
    subtype: str = ""
    mandatory: bool = False
    description: str = ""
    number_min: float | None = Field(default=None, alias="numberMin")
    number_max: float | None = Field(default=None, alias="numberMax")
    number_decimals: int | None = Field(default=None, alias="numberDecimals")
    text_max_length: int | None = Field(default=None, alias="textMaxLength")
    selection_options: list[SelectionOption] = Field(default_factory=list, alias="selectionOptions")

    @field_validator("title", "type", "subtype", "description", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("mandatory", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        return bool(value)

    @field_validator("selection_options", mode="before")
    @classmethod
    def _options(cls, value: Any) -> Any:
        return value if isinstance(value, list) else []

    @property
    def kind(self) -> str:
        """`text-line`, `number`, `selection-multi`, `datetime-date`, ... as Tables names them."""
        return f"{self.type}-{self.subtype}" if self.subtype else self.type

    @property
    def writable(self) -> bool:
        return self.type in ("text", "number", "selection", "datetime", "usergroup")


def _refuse(column: TableColumn, why: str) -> InvalidTableInput:
    return InvalidTableInput(f'column "{column.title[:80]}" (id {column.id}, {column.kind}) {why}')


def _number(column: TableColumn, value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _refuse(column, f"takes a number, not {type(value).__name__}")
    try:
        number = float(value) if isinstance(value, str) else value
        finite = math.isfinite(number)  # an int of 400 digits raised OverflowError here
    except ValueError:
        raise _refuse(column, f"takes a number, not {str(value)[:40]!r}") from None
    except OverflowError:
        finite = False
    if not finite:
        raise _refuse(column, "takes a finite number")
    low, high = column.number_min, column.number_max
    if column.subtype == "stars":
        low, high = 0, 5
    elif column.subtype == "progress":
        low, high = 0, 100
    if low is not None and number < low:
        raise _refuse(column, f"takes numbers from {low:g}; {number:g} is below")
    if high is not None and number > high:
        raise _refuse(column, f"takes numbers up to {high:g}; {number:g} is above")
    decimals = column.number_decimals or 0
    if column.subtype in ("stars", "progress") or decimals == 0:
        if number != int(number):
            raise _refuse(column, f"takes whole numbers; {number:g} would be cut")
        return int(number)
    return number


def _option(column: TableColumn, value: Any) -> int:
    """An option id from its label (exact, then ignoring case) or its id."""
    options = column.selection_options
    if isinstance(value, str):
        for found in (
            [o.id for o in options if o.label == value],
            [o.id for o in options if o.label.casefold() == value.casefold()],
        ):
            if len(found) == 1:
                return found[0]
    if isinstance(value, int) and not isinstance(value, bool) and value in {o.id for o in options}:
        return value
    labels = ", ".join(repr(o.label[:40]) for o in options[:30]) or "none"
    raise _refuse(column, f"has no option {str(value)[:60]!r}; its options: {labels}")


def _text(column: TableColumn, value: Any) -> str:
    if not isinstance(value, str):
        raise _refuse(column, f"takes text, not {type(value).__name__}")
    limit = min(column.text_max_length or MAX_TEXT, MAX_TEXT)
    if len(value) > limit:
        raise _refuse(column, f"takes at most {limit} characters (got {len(value)})")
    if column.subtype == "line" and ("\n" in value or "\r" in value):
        raise _refuse(column, "takes one line of text")
    if _CONTROL.search(value):
        raise _refuse(column, "takes text without control characters")
    if column.mandatory and not value.strip():
        raise _refuse(column, "is mandatory and cannot be emptied")
    return value


def _link(column: TableColumn, value: Any) -> str:
    if not isinstance(value, str) or not _URL.fullmatch(value.strip()) or len(value) > 2000:
        raise _refuse(column, "takes one http(s) URL such as https://example.com/page")
    url = value.strip()
    return json.dumps({"title": url, "value": url})


def _datetime(column: TableColumn, value: Any) -> str:
    if not isinstance(value, str):
        raise _refuse(column, f"takes a string, not {type(value).__name__}")
    text = value.strip()
    try:
        if column.subtype == "date":
            return date.fromisoformat(text).isoformat()
        if column.subtype == "time":
            return time.fromisoformat(text).strftime("%H:%M")
        moment = datetime.fromisoformat(text)
    except ValueError:
        shapes = {"date": "YYYY-MM-DD", "time": "HH:MM"}
        raise _refuse(
            column, f"takes {shapes.get(column.subtype, 'YYYY-MM-DD HH:MM')}, not {text[:40]!r}"
        ) from None
    if moment.tzinfo is not None:
        raise _refuse(column, "stores a wall-clock time: give it without a time zone (YYYY-MM-DD HH:MM)")
    return moment.strftime("%Y-%m-%d %H:%M")


def _usergroup(column: TableColumn, value: Any) -> list[dict[str, Any]]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
        raise _refuse(column, "takes user ids such as 'alice', or 'group:NAME' / 'team:ID' entries")
    if len(names) > 100:
        raise _refuse(column, "takes at most 100 entries")
    picked = []
    for name in names:
        kind, colon, rest = name.partition(":")
        if colon and kind in ("group", "team"):
            picked.append({"id": rest.strip(), "type": 1 if kind == "group" else 2})
        else:
            picked.append({"id": name.strip(), "type": 0})
    return picked


def encode_value(column: TableColumn, value: Any) -> Any:
    """The value to send for `column`, or `InvalidTableInput` naming the column. None (or "" for
    text) empties the cell."""
    if not column.writable:
        raise _refuse(column, "cannot be written through this server")
    if value is None:
        if column.mandatory:
            raise _refuse(column, "is mandatory and cannot be emptied")
        return [] if column.kind in ("selection-multi", "usergroup") else None
    if column.type == "text":
        return _link(column, value) if column.subtype == "link" else _text(column, value)
    if column.type == "number":
        return _number(column, value)
    if column.type == "datetime":
        return _datetime(column, value)
    if column.type == "usergroup":
        return _usergroup(column, value)
    if column.subtype == "check":
        if not isinstance(value, bool):
            raise _refuse(column, "takes true or false")
        return "true" if value else "false"
    if column.subtype == "multi":
        items = value if isinstance(value, list) else [value]
        if len(items) > 1000:
            raise _refuse(column, "takes at most 1000 options")
        return sorted({_option(column, item) for item in items})
    return _option(column, value)


def _label(column: TableColumn, option: Any) -> Any:
    for candidate in column.selection_options:
        # Tables 2.2 (Nextcloud 34) answers a row it just added with the option's id as text
        if candidate.id == option or (isinstance(option, str) and option == str(candidate.id)):
            return candidate.label
    return option  # an option deleted since: its id is all there is


def shown_value(column: TableColumn, stored: Any, max_chars: int) -> tuple[Any, bool]:
    """A stored cell as a person reads it (labels, not option ids; a link's URL), and whether a
    long text was cut to `max_chars`."""
    if stored is None or stored == "":
        return None, False
    if column.type == "selection":
        if column.subtype == "check":
            return stored in (True, "true", "1", 1), False
        if column.subtype == "multi":
            return [_label(column, o) for o in stored[:100]] if isinstance(stored, list) else stored, False
        return _label(column, stored), False
    if column.kind == "text-link" and isinstance(stored, str):
        try:
            parsed = json.loads(stored)
        except (ValueError, RecursionError):  # another user's cell: any text, any depth
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("value"), str):
            stored = parsed["value"]
    if column.type == "usergroup" and isinstance(stored, list):
        shown = []
        for entry in stored[:100]:
            if isinstance(entry, dict):
                kind = _USERGROUP_TYPES.get(json_whole(entry.get("type", 0)) or 0, "user")
                name = str(entry.get("id", ""))
                shown.append(name if kind == "user" else f"{kind}:{name}")
        return shown, False
    if isinstance(stored, str) and len(stored) > max_chars:
        return stored[:max_chars] + "…", True
    if isinstance(stored, (dict, list)):
        try:
            text = json.dumps(stored, ensure_ascii=False)
        except RecursionError:  # a cell another user nested hundreds deep: not shown
            return "…", True
        return (text[:max_chars] + "…", True) if len(text) > max_chars else (stored, False)
    return stored, False
