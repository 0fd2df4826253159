"""Tables as structure: a new table from its columns, and a column added to a table. Column types
are named as nc_tables_get_columns names them (`text-line`, `number`, `selection-multi`, ...);
every setting is checked here, since Tables stores what it cannot use as empty rather than refusing
it. Nothing here destroys or publishes: a new table is the caller's alone."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import TABLES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.names import check_visible
from nextcloud_mcp_server.tools._arguments import StrictArguments
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.toolsets.tables.client import TablesClient
from nextcloud_mcp_server.toolsets.tables.kept_columns import kept_columns
from nextcloud_mcp_server.toolsets.tables.tools_common import toolset
from nextcloud_mcp_server.toolsets.tables.values import InvalidTableInput, TableColumn

__all__ = [
    "ColumnMade",
    "NewColumn",
    "TableMade",
    "column_body",
    "nc_tables_add_column",
    "nc_tables_create_table",
]

MAX_TITLE = 200  # characters of a table's or a column's title (Tables keeps 200)
MAX_COLUMNS = 30  # columns created by one call
MAX_OPTIONS = 50
_LINE = re.compile(r"[\x00-\x1f\x7f]")
Kind = Literal[
    "text-line",
    "text-long",
    "text-link",
    "number",
    "number-stars",
    "number-progress",
    "selection",
    "selection-multi",
    "selection-check",
    "datetime",
    "datetime-date",
    "datetime-time",
]


class NewColumn(StrictArguments):
    title: Annotated[str, Field(max_length=MAX_TITLE)]
    type: Kind
    mandatory: bool = False
    description: Annotated[str, Field(max_length=1000)] = ""
    options: Annotated[
        list[Annotated[str, Field(max_length=200)]],
        Field(
            default_factory=list,
            max_length=MAX_OPTIONS,
            description="Option labels, for selection and selection-multi",
        ),
    ]
    decimals: Annotated[int | None, Field(ge=0, le=10, description="For number")] = None


class ColumnMade(BaseModel):
    id: int
    title: str
    type: str


class TableMade(BaseModel):
    id: int
    title: str
    columns: list[ColumnMade]


def _title(text: str, what: str) -> str:
    cleaned = text.strip()
    if not cleaned or _LINE.search(cleaned):
        raise InvalidTableInput(f"a {what} title must be one non-empty line without control characters")
    check_visible(cleaned, f"{what} title")
    return cleaned


def column_body(column: NewColumn) -> dict[str, Any]:
    """What Tables' `POST tables/{id}/columns` takes for this column, checked."""
    kind, _, subtype = column.type.partition("-")
    body: dict[str, Any] = {
        "title": _title(column.title, "column"),
        "type": kind,
        "subtype": subtype,
        "mandatory": column.mandatory,
        "description": column.description,
    }
    labels = [o.strip() for o in column.options]
    if column.type in ("selection", "selection-multi"):
        if not labels or any(not label or _LINE.search(label) for label in labels):
            raise InvalidTableInput(f'column "{column.title[:80]}": a selection needs options, each one line')
        if len({label.casefold() for label in labels}) < len(labels):
            raise InvalidTableInput(f'column "{column.title[:80]}": an option is given twice')
        body["selectionOptions"] = json.dumps(
            [{"id": i + 1, "label": label} for i, label in enumerate(labels)]
        )
    elif labels:
        raise InvalidTableInput(f'column "{column.title[:80]}": options are for selection columns only')
    if column.type == "selection-check":
        body["selectionDefault"] = "false"
    if column.decimals is not None:
        if column.type != "number":
            raise InvalidTableInput(f'column "{column.title[:80]}": decimals are for number columns only')
        body["numberDecimals"] = column.decimals
    if column.type == "number-stars":
        body.update(numberMin=0, numberMax=5)
    if column.type == "number-progress":
        body.update(numberMin=0, numberMax=100)
    return body


def _made(column: TableColumn) -> ColumnMade:
    return ColumnMade(id=column.id, title=column.title[:MAX_TITLE], type=column.kind)


@toolset.tool(title="Create a table")
@require_scopes(TABLES_WRITE)
async def nc_tables_create_table(
    title: Annotated[str, Field(max_length=MAX_TITLE)],
    columns: Annotated[list[NewColumn], Field(min_length=1, max_length=MAX_COLUMNS)],
    ctx: Context[Any, Any],
    emoji: Annotated[str | None, Field(max_length=20)] = None,
) -> TableMade:
    """Create a table of yours with its columns (title, type as nc_tables_get_columns names
    types, options for a selection)."""
    name = _title(title, "table")
    bodies = [column_body(c) for c in columns]
    if len({b["title"].casefold() for b in bodies}) < len(bodies):
        raise InvalidTableInput("two columns have the same title")
    tables = (await nextcloud_for(ctx)).api(TablesClient)
    table = await tables.create_table(name, emoji.strip() if emoji and emoji.strip() else None)
    made = [_made(await tables.create_column(table.id, body)) for body in bodies]
    return TableMade(id=table.id, title=table.title[:MAX_TITLE], columns=made)


@toolset.tool(title="Add a table column")
@require_scopes(TABLES_WRITE)
async def nc_tables_add_column(
    table_id: Annotated[int, Field(ge=1, le=2**53)], column: NewColumn, ctx: Context[Any, Any]
) -> ColumnMade:
    """Add a column to a table (at the end); the table's views show it as Tables decides."""
    body = column_body(column)
    nc = await nextcloud_for(ctx)
    tables = nc.api(TablesClient)
    if body["title"].casefold() in {
        c.title.strip().casefold() for c in await tables.columns(table_id=table_id)
    }:
        raise InvalidTableInput(f'table {table_id} already has a column "{body["title"][:80]}"')
    made = await tables.create_column(table_id, body)
    # as tools.py keys them: a row added next reads the table's columns again, with this one
    kept_columns.forget((nc.http.host, nc.user_id, "table", table_id))
    return _made(made)
