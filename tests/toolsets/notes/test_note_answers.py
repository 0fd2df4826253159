"""How the notes tools write what Nextcloud stores: the last change as ISO 8601 UTC."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from nextcloud_mcp_server.nextcloud.models import LAST_TIMESTAMP
from nextcloud_mcp_server.toolsets.notes.tools import _iso


def test_the_last_change_is_written_as_iso_8601_utc_across_the_whole_range() -> None:
    rng = random.Random(7)
    edges = [0, 1, 951_782_400, 1_795_614_333, 4_107_542_400, LAST_TIMESTAMP]  # 2000-02-29, 2100-03-01
    for timestamp in edges + [rng.randint(0, LAST_TIMESTAMP) for _ in range(2000)]:
        expected = datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")
        assert _iso(timestamp) == expected
