"""A status message is checked before anything is asked or written."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.toolsets.status import tools


def test_a_status_message_is_one_line_of_visible_text() -> None:
    """Runs of spaces and line breaks become one space; the message is otherwise kept as given."""
    assert tools._message("  In a\n workshop  ") == "In a workshop"
    assert tools._message(None) == ""


@pytest.mark.parametrize("message", ["Back at 5\u202e", "Busy\x00now", "Lunch\u200b"])
def test_a_status_message_with_hidden_or_control_characters_is_refused(message: str) -> None:
    """Direction overrides, NUL and zero-width characters would show others something else."""
    with pytest.raises(InvalidInput):
        tools._message(message)
