"""Arguments a model can give that raised inside a tool, an internal error with no reason, before:
found by a review of every inbound edge. Each is now refused saying what is wanted."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.toolsets.deck.input import InvalidDeckInput, check_due
from nextcloud_mcp_server.toolsets.tables.values import InvalidTableInput, TableColumn, encode_value


@pytest.mark.parametrize("due", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_deck_due_time_at_the_ends_of_the_calendar_is_refused(due: str) -> None:
    """The move to UTC ran before the year check, and overflowed."""
    with pytest.raises(InvalidDeckInput, match="between the years 1970 and 9998"):
        check_due(due)
    assert check_due("2026-12-01T17:00:00+01:00") == "2026-12-01T16:00:00+00:00"


@pytest.mark.parametrize("value", [10**400, -(10**400), "1e999", float("inf")])
def test_a_tables_number_past_a_float_is_refused(value: object) -> None:
    """An int of 400 digits raised OverflowError from the finiteness check."""
    budget = TableColumn(id=1, title="Budget", type="number")
    with pytest.raises(InvalidTableInput, match="finite number"):
        encode_value(budget, value)
    assert encode_value(budget, 12) == 12
