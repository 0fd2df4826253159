"""Rows of the Tables toolset as a model reads and writes them: columns named by title (or id),
cells as {column title: value}, filters applied here (the Tables API has none for rows), and
answers kept within a size a model can read."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.tools._arguments import StrictArguments
from nextcloud_mcp_server.toolsets.tables.client import TableRow
from nextcloud_mcp_server.toolsets.tables.values import (
    InvalidTableInput,
    TableColumn,
    encode_value,
    shown_value,
)

__all__ = [
    "MAX_CELL",
    "MAX_FILTERS",
    "MAX_VALUES",
    "RowFilter",
    "RowOut",
    "encoded",
    "matches",
    "resolve",
    "row_out",
    "shown_titles",
]

MAX_CELL = 500  # characters of one cell shown
MAX_FILTERS = 10
MAX_VALUES = 200  # cells set by one call
MAX_KEY = 300  # characters of a column name given by the model

Operator = Literal[
    "equals",
    "not_equals",
    "contains",
    "starts_with",
    "greater_than",
    "greater_or_equal",
    "less_than",
    "less_or_equal",
    "is_empty",
    "is_not_empty",
]


class RowFilter(StrictArguments):
    column: Annotated[str, Field(max_length=MAX_KEY, description="Column title or id")]
    op: Operator
    value: Annotated[
        str | float | bool | None,
        Field(description="Compared with the cell as shown (option labels, dates as YYYY-MM-DD)"),
    ] = None


class RowOut(BaseModel):
    id: int
    version: str | None = Field(
        description="Pass to nc_tables_update_row; it changes with every edit (null in the answer "
        "that added the row: read the row for it)"
    )
    values: dict[str, Any] = Field(description="Column title -> value; options by label")
    cut: list[str] | None = Field(default=None, description="Columns whose text was cut here")


def resolve(columns: list[TableColumn], key: str) -> TableColumn:
    """The column a model named: its exact title, else its title ignoring case, else its id."""
    name = key.strip()
    for found in (
        [c for c in columns if c.title == name],
        [c for c in columns if c.title.casefold() == name.casefold()],
    ):
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            ids = ", ".join(str(c.id) for c in found[:10])
            raise InvalidTableInput(f'several columns are titled "{name[:80]}": name one by its id ({ids})')
    if (number := ascii_number(name)) is not None:
        for column in columns:
            if column.id == number:
                return column
    titles = ", ".join(repr(c.title[:40]) for c in columns[:40]) or "none"
    raise InvalidTableInput(f'no column "{name[:80]}" here; the columns are: {titles}')


def shown_titles(columns: list[TableColumn]) -> dict[int, str]:
    """Each column's key in a row: its title, or `title #id` where titles repeat."""
    seen: dict[str, int] = {}
    for column in columns:
        seen[column.title] = seen.get(column.title, 0) + 1
    return {c.id: c.title if seen[c.title] == 1 else f"{c.title} #{c.id}" for c in columns}


def row_out(
    row: TableRow, columns: list[TableColumn], titles: dict[int, str], max_cell: int = MAX_CELL
) -> RowOut:
    """A row as shown; filters see it whole (`max_cell` large), answers cut to MAX_CELL."""
    cells = row.cells
    values: dict[str, Any] = {}
    cut: list[str] = []
    for column in columns:
        value, was_cut = shown_value(column, cells.get(column.id), max_cell)
        values[titles[column.id]] = value
        if was_cut:
            cut.append(titles[column.id])
    version = row.version if row.last_edit_at else None  # a row just added: not known yet
    return RowOut(id=row.id, version=version, values=values, cut=cut or None)


def encoded(columns: list[TableColumn], values: dict[str, Any]) -> dict[int, Any]:
    """The model's {column: value} as {column id: stored form}; each value checked."""
    if not values:
        raise InvalidTableInput("give at least one column value")
    if len(values) > MAX_VALUES:
        raise InvalidTableInput(f"give at most {MAX_VALUES} column values at once")
    out: dict[int, Any] = {}
    for key, value in values.items():
        column = resolve(columns, key[:MAX_KEY])
        if column.id in out:
            raise InvalidTableInput(f'column "{column.title[:80]}" is given twice')
        out[column.id] = encode_value(column, value)
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except RecursionError:  # a cell another user nested hundreds deep
        return ""


def _compare(cell: Any, op: str, wanted: Any) -> bool:
    """One filter on one shown value (a list matches when any of its items does; an item that is
    itself a list is compared as its text, so a deep cell costs no recursion)."""
    if isinstance(cell, list):
        if op == "not_equals":
            return all(_compare_one(item, "equals", wanted) is False for item in cell)
        return any(_compare_one(item, op, wanted) for item in cell)
    return _compare_one(cell, op, wanted)


def _compare_one(cell: Any, op: str, wanted: Any) -> bool:
    if isinstance(cell, list):
        cell = _text(cell)
    if cell is None:
        return op == "not_equals" and wanted is not None
    if op in ("equals", "not_equals"):
        if isinstance(cell, bool) or isinstance(wanted, bool):
            same = _text(cell).casefold() == _text(wanted).casefold()
        elif _number(cell) is not None and _number(wanted) is not None and not isinstance(cell, str):
            same = _number(cell) == _number(wanted)
        else:
            same = _text(cell).casefold() == _text(wanted).casefold()
        return same if op == "equals" else not same
    if op in ("contains", "starts_with"):
        text, part = _text(cell).casefold(), _text(wanted).casefold()
        return part in text if op == "contains" else text.startswith(part)
    left, right = _number(cell), _number(wanted)
    if left is None or right is None or isinstance(cell, str):
        a, b = _text(cell), _text(wanted)  # dates and times compare as text (ISO order)
        return {"greater_than": a > b, "greater_or_equal": a >= b, "less_than": a < b}.get(op, a <= b)
    return {"greater_than": left > right, "greater_or_equal": left >= right, "less_than": left < right}.get(
        op, left <= right
    )


def matches(row: RowOut, filters: list[tuple[str, RowFilter]]) -> bool:
    """Whether a shown row passes every filter (`(shown title, filter)` pairs)."""
    for title, rule in filters:
        cell = row.values.get(title)
        empty = cell is None or cell == "" or cell == []
        if rule.op in ("is_empty", "is_not_empty"):
            if empty != (rule.op == "is_empty"):
                return False
        elif rule.value is None:
            raise InvalidTableInput(f'the filter on "{rule.column[:80]}" with {rule.op} needs a value')
        elif not _compare(cell, rule.op, rule.value):
            return False
    return True
