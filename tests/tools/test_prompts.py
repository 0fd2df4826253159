"""How approval prompts put times and sizes for a person to read."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.tools._file_approval import human_size
from nextcloud_mcp_server.toolsets.calendar.tools_common import spoken_span


@pytest.mark.parametrize(
    ("view", "spoken"),
    [
        (
            {
                "start": "2026-12-04T09:00:00+01:00",
                "end": "2026-12-04T09:30:00+01:00",
                "all_day": False,
                "timezone": "Europe/Berlin",
            },
            "on Fri 04 Dec 2026, 09:00-09:30 (Europe/Berlin)",
        ),
        (
            {
                "start": "2026-12-04T22:00:00+00:00",
                "end": "2026-12-05T01:00:00+00:00",
                "all_day": False,
                "timezone": None,
            },
            "from Fri 04 Dec 2026 22:00 to Sat 05 Dec 2026 01:00 (floating time, no time zone)",
        ),
        ({"start": "2026-12-24", "end": "2026-12-25", "all_day": True}, "on Thu 24 Dec 2026 (all day)"),
        (
            {"start": "2026-12-24", "end": "2026-12-27", "all_day": True},
            "from Thu 24 Dec 2026 to Sat 26 Dec 2026 (all day)",
        ),
    ],
)
def test_event_times_read_like_a_calendar(view: dict[str, object], spoken: str) -> None:
    assert spoken_span(view) == spoken


@pytest.mark.parametrize(
    ("count", "spoken"),
    [(None, "unknown size"), (0, "0 bytes"), (1023, "1023 bytes"), (1536, "1.5 KB"), (5 * 1024**3, "5.0 GB")],
)
def test_sizes_read_like_a_file_manager(count: int | None, spoken: str) -> None:
    assert human_size(count) == spoken
