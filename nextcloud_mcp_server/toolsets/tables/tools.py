"""Tables toolset: the Nextcloud Tables app (tables, views, columns, rows) through its REST API v1,
which Tables 0.9 (Nextcloud 29) and 2.2 (Nextcloud 34) answer alike (ADR 0045)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import TABLES_READ, TABLES_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.errors import NextcloudError, PreconditionFailed
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval, shrinks
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._results import answer, stale_version
from nextcloud_mcp_server.tools._shown import bound_version
from nextcloud_mcp_server.tools._versions import approve_update
from nextcloud_mcp_server.toolsets.tables import tools_create
from nextcloud_mcp_server.toolsets.tables.client import TableRow, TablesClient
from nextcloud_mcp_server.toolsets.tables.kept_columns import kept_columns
from nextcloud_mcp_server.toolsets.tables.tools_common import toolset
from nextcloud_mcp_server.toolsets.tables.tools_rows import (
    MAX_FILTERS,
    RowFilter,
    RowOut,
    encoded,
    matches,
    resolve,
    row_out,
    shown_titles,
)
from nextcloud_mcp_server.toolsets.tables.values import MAX_TEXT, InvalidTableInput, TableColumn
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["tools_create", "toolset"]

TableId = Annotated[int | None, Field(ge=1, le=2**53, description="The table's id (or give view_id)")]
ViewId = Annotated[int | None, Field(ge=1, le=2**53, description="A view's id instead of table_id")]
RowId = Annotated[int, Field(ge=1, le=2**53, description="The row's id, as read")]
Values = Annotated[
    dict[str, str | int | float | bool | list[str] | None],
    Field(
        description="Column title (or id) -> value: text, number, option label(s), true/false, "
        "'YYYY-MM-DD', 'YYYY-MM-DD HH:MM', 'HH:MM', a URL; null empties a cell"
    ),
]
SCAN_CHUNK = 100  # rows per request while filtering
MAX_SCAN = 1000  # rows read from Nextcloud by one filtered call
MAX_ANSWER = 60_000  # characters of rows in one answer
MAX_DESCRIPTION = 300


class ViewOut(BaseModel):
    id: int
    title: str
    rows: int


class TableOut(BaseModel):
    id: int
    title: str
    emoji: str | None = None
    description: str = ""
    owner: str
    rows: int
    columns: int
    archived: bool = False
    views: list[ViewOut]


class TableList(BaseModel):
    tables: list[TableOut]
    total: int


class ColumnOut(BaseModel):
    id: int
    title: str
    type: str = Field(
        description="text-line, text-long, text-rich, text-link, number, number-stars, "
        "number-progress, selection, selection-multi, selection-check, datetime, "
        "datetime-date, datetime-time, usergroup"
    )
    mandatory: bool
    description: str = ""
    options: list[str] | None = Field(default=None, description="A selection's option labels")
    min: float | None = None
    max: float | None = None
    decimals: int | None = None


class ColumnList(BaseModel):
    table_id: int
    view_id: int | None = None
    columns: list[ColumnOut]


class RowPage(BaseModel):
    rows: list[RowOut]
    offset: int
    next_offset: int | None = Field(description="Pass as offset for more; null at the end")
    scanned: int = Field(description="Rows read from Nextcloud for this answer")
    notice: str | None = None


class RowResult(BaseModel):
    table_id: int
    row: RowOut


class DeletedRow(BaseModel):
    id: int
    table_id: int
    deleted: bool = True


def _node(table_id: int | None, view_id: int | None) -> dict[str, int | None]:
    if (table_id is None) == (view_id is None):
        raise InvalidTableInput("give exactly one of table_id or view_id")
    return {"table_id": table_id, "view_id": view_id}


def _column_out(column: TableColumn) -> ColumnOut:
    numeric = column.type == "number"
    return ColumnOut(
        id=column.id,
        title=column.title,
        type=column.kind,
        mandatory=column.mandatory,
        description=column.description[:MAX_DESCRIPTION],
        options=[o.label for o in column.selection_options[:100]] if column.type == "selection" else None,
        min=column.number_min if numeric else None,
        max=column.number_max if numeric else None,
        decimals=(column.number_decimals or 0) if numeric and not column.subtype else None,
    )


@toolset.tool(title="List tables", read_only=True)
@require_scopes(TABLES_READ)
async def nc_tables_list_tables(
    ctx: Context[Any, Any],
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> TableList:
    """List the tables you own or that are shared with you, with their views and row counts."""
    nc = await nextcloud_for(ctx)
    tables = sorted(await nc.api(TablesClient).tables(), key=lambda t: (t.title.casefold(), t.id))
    return TableList(
        tables=[
            TableOut(
                id=t.id,
                title=t.title,
                emoji=t.emoji,
                description=t.description[:MAX_DESCRIPTION],
                owner=t.ownership,
                rows=t.rows_count,
                columns=t.columns_count,
                archived=t.archived,
                views=[ViewOut(id=v.id, title=v.title, rows=v.rows_count) for v in t.views[:50]],
            )
            for t in tables[offset : offset + limit]
        ],
        total=len(tables),
    )


def _kept(nc: NextcloudClient, table_id: int | None, view_id: int | None) -> tuple[str, str, str, int]:
    """Whose columns of which table or view (kept_columns' key)."""
    node = ("view", view_id) if view_id is not None else ("table", table_id or 0)
    return (nc.http.host, nc.user_id, *node)


async def _columns(
    nc: NextcloudClient, table_id: int | None, view_id: int | None, *, recent: bool = False
) -> tuple[int, list[TableColumn]]:
    """(the table's id, the columns of the table or view); `recent`: as this user read them in
    the last seconds, if they did (kept_columns)."""
    key = _kept(nc, table_id, view_id)
    found = kept_columns.get(key) if recent else None
    if found is not None:
        return found
    if view_id is not None:
        view = await nc.api(TablesClient).view(view_id)
        table, columns = view.table_id, await nc.api(TablesClient).columns(view_id=view_id)
    else:
        assert table_id is not None
        table, columns = table_id, await nc.api(TablesClient).columns(table_id=table_id)
    kept_columns.put(key, table, columns)
    return table, columns


@toolset.tool(title="Get table columns", read_only=True)
@require_scopes(TABLES_READ)
async def nc_tables_get_columns(
    ctx: Context[Any, Any], table_id: TableId = None, view_id: ViewId = None
) -> ColumnList:
    """The columns of a table or view: id, title, type, whether mandatory, selection options and
    number bounds. Read this before adding or updating rows."""
    _node(table_id, view_id)
    nc = await nextcloud_for(ctx)
    table, columns = await _columns(nc, table_id, view_id)
    return ColumnList(table_id=table, view_id=view_id, columns=[_column_out(c) for c in columns[:300]])


@toolset.tool(title="Read table rows", read_only=True)
@require_scopes(TABLES_READ)
async def nc_tables_read_rows(
    ctx: Context[Any, Any],
    table_id: TableId = None,
    view_id: ViewId = None,
    filters: Annotated[
        list[RowFilter] | None, Field(max_length=MAX_FILTERS, description="All must match")
    ] = None,
    columns: Annotated[
        list[Annotated[str, Field(max_length=300)]] | None,
        Field(max_length=100, description="Only these columns (titles or ids)"),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    offset: Annotated[int, Field(ge=0, le=10**9)] = 0,
) -> RowPage:
    """Read rows of a table or view as {column title: value}, `limit` from `offset`. A view's own
    filter is applied by Nextcloud; `filters` are applied by this server while it reads up to
    1000 rows per call (continue from next_offset)."""
    _node(table_id, view_id)
    nc = await nextcloud_for(ctx)
    _, all_columns = await _columns(nc, table_id, view_id)
    titles = shown_titles(all_columns)
    rules = [(titles[resolve(all_columns, f.column).id], f) for f in filters or []]
    for _, rule in rules:
        if rule.value is None and rule.op not in ("is_empty", "is_not_empty"):
            raise InvalidTableInput(f'the filter on "{rule.column[:80]}" with {rule.op} needs a value')
    shown = [resolve(all_columns, key) for key in columns] if columns else all_columns
    rows: list[RowOut] = []
    size, position, scanned, notice = 0, offset, 0, None
    chunk = SCAN_CHUNK if rules else limit + 1
    while True:
        page = await nc.api(TablesClient).rows(
            table_id=table_id, view_id=view_id, limit=chunk, offset=position
        )
        scanned += len(page)
        for index, row in enumerate(page):
            if rules and not matches(row_out(row, all_columns, titles, MAX_TEXT), rules):
                continue
            out = row_out(row, shown, titles)
            cost = len(out.model_dump_json())
            if len(rows) == limit or (rows and size + cost > MAX_ANSWER):
                if len(rows) < limit:
                    notice = f"cut at {len(rows)} rows to keep the answer short; continue from next_offset"
                return RowPage(
                    rows=rows, offset=offset, next_offset=position + index, scanned=scanned, notice=notice
                )
            rows.append(out)
            size += cost
        position += len(page)
        if len(page) < chunk:
            return RowPage(rows=rows, offset=offset, next_offset=None, scanned=scanned)
        if not rules or scanned >= MAX_SCAN:
            if rules:
                notice = f"read {scanned} rows without finding {limit} matches; continue from next_offset"
            return RowPage(rows=rows, offset=offset, next_offset=position, scanned=scanned, notice=notice)


def _result(row: TableRow, columns: list[TableColumn]) -> RowResult:
    return RowResult(table_id=row.table_id, row=row_out(row, columns, shown_titles(columns)))


@toolset.tool(title="Add a table row")
@require_scopes(TABLES_WRITE)
async def nc_tables_add_row(
    values: Values, ctx: Context[Any, Any], table_id: TableId = None, view_id: ViewId = None
) -> RowResult:
    """Add a row to a table or view. Each value is checked against its column's type first; a
    mandatory column left out or a value that does not fit is refused, naming the column. The
    answer has no version yet: read the row before updating it."""
    _node(table_id, view_id)
    nc = await nextcloud_for(ctx)
    # one request when the columns were read in the last seconds (kept_columns), else two
    _, columns = await _columns(nc, table_id, view_id, recent=True)
    try:
        cells = encoded(columns, values)
    except InvalidTableInput:
        # refused by columns kept from a recent read: read them now, and refuse (or add) by those
        kept_columns.forget(_kept(nc, table_id, view_id))
        _, columns = await _columns(nc, table_id, view_id)
        cells = encoded(columns, values)
    missing = [c.title for c in columns if c.mandatory and c.id not in cells]
    if missing:
        raise InvalidTableInput(
            f"mandatory columns need a value: {', '.join(repr(t[:80]) for t in missing[:20])}"
        )
    try:
        row = await nc.api(TablesClient).create_row(cells, table_id=table_id, view_id=view_id)
    except NextcloudError:
        kept_columns.forget(_kept(nc, table_id, view_id))  # perhaps they changed: read them again
        raise
    return _result(row, columns)


@toolset.tool(title="Update a table row", idempotent=True, view=APPROVAL)
@require_scopes(TABLES_WRITE)
async def nc_tables_update_row(
    row_id: RowId,
    version: Annotated[str, Field(min_length=1, max_length=300, description="The row's version as read")],
    values: Values,
    ctx: Context[Any, Any],
    view_id: Annotated[int | None, Field(ge=1, le=2**53, description="The view it was read from")] = None,
) -> Annotated[CallToolResult, RowResult]:
    """Change only the given columns of a row. Requires the version from nc_tables_read_rows: if
    the row changed since, nothing is written and the current row is returned with the error.
    Emptying a cell or cutting its text to less than half asks the user first."""
    nc = await nextcloud_for(ctx)
    current = await nc.api(TablesClient).row(row_id)
    _, columns = await _columns(nc, None if view_id else current.table_id, view_id)
    cells = encoded(columns, values)
    before = current.cells
    by_id = {c.id: c for c in columns}
    removed = [
        f'"{by_id[c].title[:80]}"'
        for c, new in cells.items()
        if before.get(c) not in (None, "", [])
        and (new in (None, "", []) or (isinstance(new, str) and shrinks(str(before[c]), new)))
    ]
    target = f"row {row_id} of table {current.table_id}"
    question = f"Empty or cut {', '.join(removed)} in {target}?" if removed else None
    titles = shown_titles(columns)
    try:
        approved = await approve_update(
            ctx,
            tool="nc_tables_update_row",
            target=target,
            host=nc.api(TablesClient).host,
            given=version.strip(),
            current=current.version,
            question=question,
            argument="version",
        )

        async def send(_: str) -> TableRow:
            shown = bound_version(current.version, current)
            if (
                approved.asked
                and bound_version(current.version, await nc.api(TablesClient).row(row_id)) != shown
            ):
                raise PreconditionFailed(
                    nc.api(TablesClient).host, f"{target} changed while you were asked", status=412
                )
            return await nc.api(TablesClient).update_row(row_id, cells, view_id=view_id)

        row = await approved.write(ctx, send)
    except PreconditionFailed as changed:
        return stale_version(changed, "row", "current_row", row_out(current, columns, titles))
    return answer(_result(row, columns))


@toolset.tool(title="Delete a table row", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(TABLES_WRITE)
async def nc_tables_delete_row(row_id: RowId, ctx: Context[Any, Any]) -> DeletedRow:
    """Delete a row. The user is asked to approve first (unless the server is set up not to ask);
    Tables keeps no trash, so it cannot be restored."""
    nc = await nextcloud_for(ctx)
    row = await nc.api(TablesClient).row(row_id)
    table = await nc.api(TablesClient).table(row.table_id)
    columns = await nc.api(TablesClient).columns(table_id=row.table_id)
    shown = row_out(row, columns[:3], shown_titles(columns))
    summary = ", ".join(f"{k}: {str(v)[:60]}" for k, v in shown.values.items())
    target = f'row {row_id} of the table "{table.title[:80]}"'
    question = f"Delete {target} ({summary[:300]}), last changed {row.last_edit_at or 'unknown'}?"
    # bound to the row's content: its version (last change, to the second) stays the same across
    # a change made in the same second (ADR 0057)
    version = bound_version(row.version, row)
    asked = await require_approval(
        ctx, tool="nc_tables_delete_row", target=target, question=question, version=version
    )
    if asked and bound_version((again := await nc.api(TablesClient).row(row_id)).version, again) != version:
        await refuse_changed(ctx, tool="nc_tables_delete_row", target=target)
    await nc.api(TablesClient).delete_row(row_id)
    return DeletedRow(id=row_id, table_id=row.table_id)
