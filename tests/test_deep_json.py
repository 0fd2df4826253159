"""JSON nested deeper than Python's parser recurses (about 1,000 levels) raises RecursionError,
which is no ValueError: every parse of JSON another party wrote treats it as JSON that does not
parse. A body of 5,000 brackets is 10 KB."""

from __future__ import annotations

from typing import Any

from nextcloud_mcp_server.auth.resource_server import _called, _called_through
from nextcloud_mcp_server.toolsets.tables.client import _message
from nextcloud_mcp_server.toolsets.tables.tools_rows import _compare
from nextcloud_mcp_server.toolsets.tables.values import TableColumn, shown_value

DEEP = "[" * 5000 + "]" * 5000


def test_a_deep_request_body_names_no_tool_and_is_left_to_the_sdk() -> None:
    # the scope check reads a caller's request before the SDK does: it raised, and answered 500
    assert _called(DEEP.encode(), "tools/call", "name") == []
    assert _called_through(DEEP.encode(), "nc_call") == []
    assert _called(b'{"method": "tools/call", "params": {"name": "nc_x"}}', "tools/call", "name") == ["nc_x"]


def test_a_deep_link_cell_is_shown_as_its_text() -> None:
    link = TableColumn(id=1, title="Link", type="text", subtype="link")
    assert shown_value(link, '{"value": "https://example.org"}', 100) == ("https://example.org", False)
    assert shown_value(link, DEEP, 100_000) == (DEEP, False)  # another user's cell raised before


def test_a_deep_refusal_of_tables_says_nothing() -> None:
    assert _message('{"message": "no such row"}') == "no such row"
    assert _message(DEEP) == ""


def _nested(depth: int) -> list[Any]:
    cell: list[Any] = ["x"]
    for _ in range(depth):
        cell = [cell]
    return cell


def test_a_deep_cell_is_filtered_without_recursion_and_shown_cut() -> None:
    """A Tables cell nested 600 deep raised RecursionError from a row filter (two frames a level);
    one nested past json's recursion raised from the showing."""
    deep = _nested(600)
    assert _compare(deep, "contains", "y") is False
    assert _compare(deep, "not_equals", "y") is True
    assert _compare([1, 2, 3], "equals", 2) is True  # a flat list still matches by its items
    link = TableColumn(id=1, title="Data", type="text")
    assert shown_value(link, _nested(5000), 100) == ("…", True)
