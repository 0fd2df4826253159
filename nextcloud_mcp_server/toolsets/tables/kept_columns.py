"""The columns of a table or view a user read in the last seconds, so that adding a row right
after reading the table is one request to Nextcloud (issue 43: three requests, 352 ms, before).

Kept per user (the Nextcloud host and the user's id) for `SECONDS`; at most `MAX_ENTRIES` tables
and views for all users together, the least recently used forgotten first. A column changed in
those seconds is met by Tables itself: the value is refused or, as Tables does with any value
that does not fit, stored empty in the new row (no existing row is touched); after an error the
columns are forgotten so the next call reads them again.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

from nextcloud_mcp_server.toolsets.tables.values import TableColumn

__all__ = ["KeptColumns", "kept_columns"]

SECONDS = 30.0
MAX_ENTRIES = 2048


class KeptColumns:
    def __init__(
        self,
        *,
        seconds: float = SECONDS,
        max_entries: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds, self.max_entries, self._clock = seconds, max_entries, clock
        self._entries: OrderedDict[Hashable, tuple[float, int, list[TableColumn]]] = OrderedDict()

    def get(self, key: Hashable) -> tuple[int, list[TableColumn]] | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self._clock():
            self._entries.pop(key, None)
            return None
        self._entries.move_to_end(key)
        return entry[1], list(entry[2])

    def put(self, key: Hashable, table_id: int, columns: list[TableColumn]) -> None:
        self._entries[key] = (self._clock() + self.seconds, table_id, list(columns))
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def forget(self, key: Hashable) -> None:
        self._entries.pop(key, None)


kept_columns = KeptColumns()  # the process's: keys carry the host and the user
