"""The Tables app's REST API v1 (`/index.php/apps/tables/api/1`), the one both supported releases
answer the same way: Tables 0.9.11 on Nextcloud 29 and 2.2.2 on 34. (The OCS API v2 differs
between them and cannot read or update rows at all.)

Behaviour seen on both real servers (see tests/toolsets/tables/test_tables.py):
- rows are read with `limit`/`offset`; the API has no row filter, so filters are applied by the
  caller (a view's own filter is applied by Nextcloud when its rows are read);
- a row has no ETag: `lastEditAt` (to the second) and `lastEditBy` are its only version, and the
  answer to `PUT /rows/{id}` still carries the old `lastEditAt`, so the row is read again;
- unknown tables answer 404 with an empty body, unknown rows 404 with a message naming SQL;
  updating an unknown row answers 500;
- a value Tables cannot parse is stored as an empty cell, without an error (see table_values).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field, TypeAdapter, ValidationError, field_validator

from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.errors import (
    Forbidden,
    InvalidResponse,
    NextcloudHTTPError,
    NotFound,
    ServerError,
)
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, json_body
from nextcloud_mcp_server.nextcloud.models import AppModel, plain_text
from nextcloud_mcp_server.nextcloud.ocs import OCSClient
from nextcloud_mcp_server.toolsets.tables.values import TableColumn

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = [
    "TABLES_APP_MISSING",
    "TableInfo",
    "TableRow",
    "TablesAppMissing",
    "TablesClient",
    "ViewInfo",
]

API = "/index.php/apps/tables/api/1"
TABLES_APP_MISSING = "Tables is not installed or not enabled for you on this Nextcloud"
_JSON = {"Accept": "application/json"}


class TablesAppMissing(NotFound):
    """Nextcloud has no Tables app for this user (not installed, disabled, or not for them)."""


class ViewInfo(AppModel):
    id: int
    table_id: int = Field(default=0, alias="tableId")
    title: str = ""
    emoji: str | None = None
    rows_count: int = Field(default=0, alias="rowsCount")
    columns: list[int] = Field(default_factory=list)

    _blank = field_validator("title", mode="before")(plain_text)

    @field_validator("columns", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        return [c for c in value if isinstance(c, int)] if isinstance(value, list) else []


class TableInfo(AppModel):
    id: int
    title: str = ""
    emoji: str | None = None
    description: str = ""
    ownership: str = ""
    rows_count: int = Field(default=0, alias="rowsCount")
    columns_count: int = Field(default=0, alias="columnsCount")
    archived: bool = False
    is_shared: bool = Field(default=False, alias="isShared")
    views: list[ViewInfo] = Field(default_factory=list)

    _blank = field_validator("title", "description", "ownership", mode="before")(plain_text)

    @field_validator("views", "archived", "is_shared", mode="before")
    @classmethod
    def _lists(cls, value: Any, info: Any) -> Any:
        if info.field_name == "views":
            return value if isinstance(value, list) else []
        return bool(value)


class _Cell(AppModel):
    column_id: int = Field(alias="columnId")
    value: Any = None


class TableRow(AppModel):
    id: int
    table_id: int = Field(default=0, alias="tableId")
    created_by: str | None = Field(default=None, alias="createdBy")
    last_edit_by: str | None = Field(default=None, alias="lastEditBy")
    last_edit_at: str | None = Field(default=None, alias="lastEditAt")
    data: list[_Cell] = Field(default_factory=list)

    @property
    def cells(self) -> dict[int, Any]:
        return {cell.column_id: cell.value for cell in self.data}

    @property
    def version(self) -> str:
        """What Tables offers as a version: the last change's time (to the second) and author."""
        return f"{(self.last_edit_at or '-').replace(' ', 'T')}|{self.last_edit_by or '-'}"


_TABLES = TypeAdapter(list[TableInfo])
_VIEWS = TypeAdapter(list[ViewInfo])
_COLUMNS = TypeAdapter(list[TableColumn])
_ROWS = TypeAdapter(list[TableRow])


class TablesClient:
    """The Tables API for one user."""

    def __init__(self, http: NextcloudHTTP, credential: Credential | None, ocs: OCSClient) -> None:
        self._http = http
        self._credential = credential
        self._ocs = ocs

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential, nextcloud.ocs)

    @property
    def host(self) -> str:
        return self._http.host

    async def _missing(self) -> bool:
        """Whether Nextcloud says Tables is absent or disabled for this user (asked on a 404)."""
        caps = (await self._ocs.capabilities()).get("capabilities", {})
        tables = caps.get("tables") if isinstance(caps, dict) else None
        return not isinstance(tables, dict) or tables.get("enabled") is False

    async def _call(self, method: str, path: str, what: str, **kwargs: Any) -> Any:
        try:
            response = await self._http.request(
                method, f"{API}{path}", credential=self._credential, headers=_JSON, **kwargs
            )
        except NotFound as exc:
            if await self._missing():
                raise TablesAppMissing(self.host, TABLES_APP_MISSING, status=404, body=exc.body) from None
            raise NotFound(
                self.host, f"{what} does not exist or is not shared with you", status=404
            ) from None
        except Forbidden as exc:
            raise Forbidden(
                self.host, f"no access to {what} (403): it does not exist or you may not do this", status=403
            ) from exc
        except ServerError as exc:
            if exc.status == 500 and "found none" in exc.body:  # Tables' 500 for an unknown row
                raise NotFound(self.host, f"{what} does not exist", status=404) from None
            raise
        except NextcloudHTTPError as exc:
            if exc.status == 400:  # Tables' own words: a mandatory column, a value out of range
                said = _message(exc.body)
                raise NextcloudHTTPError(
                    self.host, f"Tables refused this: {said or 'bad request'}", status=400, body=exc.body
                ) from None
            raise
        return json_body(response, self.host)

    def _parse(self, adapter: TypeAdapter[Any], payload: Any, what: str) -> Any:
        try:
            return adapter.validate_python(payload)
        except ValidationError:
            raise InvalidResponse(self.host, f"the Tables app answered {what} in an unknown shape") from None

    async def tables(self) -> list[TableInfo]:
        """Every table the user owns or that is shared with them, with their views."""
        result: list[TableInfo] = self._parse(
            _TABLES, await self._call("GET", "/tables", "the tables"), "tables"
        )
        return result

    async def table(self, table_id: int) -> TableInfo:
        payload = await self._call("GET", f"/tables/{table_id}", f"table {table_id}")
        result: TableInfo = self._parse(TypeAdapter(TableInfo), payload, "a table")
        return result

    async def view(self, view_id: int) -> ViewInfo:
        payload = await self._call("GET", f"/views/{view_id}", f"view {view_id}")
        result: ViewInfo = self._parse(TypeAdapter(ViewInfo), payload, "a view")
        return result

    async def views(self, table_id: int) -> list[ViewInfo]:
        payload = await self._call("GET", f"/tables/{table_id}/views", f"table {table_id}")
        result: list[ViewInfo] = self._parse(_VIEWS, payload, "views")
        return result

    async def columns(self, *, table_id: int | None = None, view_id: int | None = None) -> list[TableColumn]:
        """The columns of a table, or those a view shows (in the view's order)."""
        if view_id is not None:
            payload = await self._call("GET", f"/views/{view_id}/columns", f"view {view_id}")
        else:
            payload = await self._call("GET", f"/tables/{table_id}/columns", f"table {table_id}")
        result: list[TableColumn] = self._parse(_COLUMNS, payload, "columns")
        return result

    async def rows(
        self, *, table_id: int | None = None, view_id: int | None = None, limit: int, offset: int
    ) -> list[TableRow]:
        """One page of rows; a view's own filter and sorting are applied by Nextcloud."""
        node = f"/views/{view_id}" if view_id is not None else f"/tables/{table_id}"
        what = f"view {view_id}" if view_id is not None else f"table {table_id}"
        params = {"limit": limit, "offset": offset}
        result: list[TableRow] = self._parse(
            _ROWS, await self._call("GET", f"{node}/rows", what, params=params), "rows"
        )
        return result

    async def row(self, row_id: int) -> TableRow:
        payload = await self._call("GET", f"/rows/{row_id}", f"row {row_id}")
        result: TableRow = self._parse(TypeAdapter(TableRow), payload, "a row")
        return result

    async def create_row(
        self, values: dict[int, Any], *, table_id: int | None = None, view_id: int | None = None
    ) -> TableRow:
        """Add a row; `values` by column id, already in the stored form (`encode_value`). One
        request: the answer has the row's id and cells but not its author and times, so the row
        has no version (`last_edit_at` None) until it is read."""
        node = f"/views/{view_id}" if view_id is not None else f"/tables/{table_id}"
        what = f"view {view_id}" if view_id is not None else f"table {table_id}"
        data = {str(column): value for column, value in values.items()}
        created = await self._call("POST", f"{node}/rows", what, json={"data": data})
        row: TableRow = self._parse(TypeAdapter(TableRow), created, "a row")
        return row

    async def update_row(
        self, row_id: int, values: dict[int, Any], *, view_id: int | None = None
    ) -> TableRow:
        """Change only the given cells; returns the row as stored afterwards."""
        body: dict[str, Any] = {"data": {str(column): value for column, value in values.items()}}
        if view_id is not None:
            body["viewId"] = view_id
        await self._call("PUT", f"/rows/{row_id}", f"row {row_id}", json=body)
        return await self.row(row_id)  # the answer carries the old lastEditAt

    async def delete_row(self, row_id: int) -> None:
        await self._call("DELETE", f"/rows/{row_id}", f"row {row_id}")

    async def create_table(self, title: str, emoji: str | None) -> TableInfo:
        """A new empty table of the caller's (the `custom` template: no columns, no views)."""
        body = {"title": title, "emoji": emoji, "template": "custom"}
        payload = await self._call("POST", "/tables", "a new table", json=body)
        result: TableInfo = self._parse(TypeAdapter(TableInfo), payload, "a table")
        return result

    async def create_column(self, table_id: int, column: dict[str, Any]) -> TableColumn:
        """Add a column (`title`, `type`, `subtype` and the type's settings, as the API names them)."""
        payload = await self._call("POST", f"/tables/{table_id}/columns", f"table {table_id}", json=column)
        result: TableColumn = self._parse(TypeAdapter(TableColumn), payload, "a column")
        return result


def _message(body: str) -> str:
    try:
        said = json.loads(body[:4096]).get("message")
    except (ValueError, AttributeError, RecursionError):
        return ""
    return str(said)[:300] if said else ""
