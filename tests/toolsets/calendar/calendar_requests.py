"""What a test's calendar calls cost Nextcloud: the requests to `/remote.php/dav/calendars/`
since a counter began, from the double's record or the real instance's nginx access log."""

from __future__ import annotations

import time
from pathlib import Path

from tests.backends import Nextcloud

__all__ = ["CalendarRequests", "access_log"]


def access_log(nextcloud: Nextcloud) -> Path | None:
    return Path(nextcloud.instance.config["logs"]["nginx_access"]) if nextcloud.instance is not None else None


class CalendarRequests:
    """The REPORTs Nextcloud received meanwhile: bodies on the double, method and status (from
    nginx's access log) on the real ones. nginx writes a request's line just after the answer's
    last byte, so on a busy machine a client can be quicker than the log: a count that must reach
    `expected` is polled for it (with a deadline), and a counter begun after earlier requests is
    begun only once their lines are in (`count(..., expected=n)` on the counter before it)."""

    def __init__(self, nextcloud: Nextcloud) -> None:
        self.nextcloud = nextcloud
        log = access_log(nextcloud)
        self._log_from = log.stat().st_size if log is not None else 0
        double = nextcloud.double
        self._reports_from = len(double.calendar_reports) if double is not None else 0
        self._requests_from = len(double.requests) if double is not None else 0

    def report_bodies(self) -> list[str]:
        assert self.nextcloud.double is not None
        return [b.decode() for b in list(self.nextcloud.double.calendar_reports)[self._reports_from :]]

    def count(self, method: str, *, expected: int = 0) -> int:
        """The `method` requests to calendars since this counter began; on the real ones, waited
        for until there are `expected` of them (at most 10 s), so more or fewer still fail."""
        deadline = time.monotonic() + 10
        while True:
            found = self._logged(method)
            if found >= expected or time.monotonic() > deadline:
                return found
            time.sleep(0.02)

    def _logged(self, method: str) -> int:
        if self.nextcloud.double is not None:
            recorded = list(self.nextcloud.double.requests)[self._requests_from :]
            return sum(
                1 for r in recorded if r.method == method and r.path.startswith("/remote.php/dav/calendars/")
            )
        log = access_log(self.nextcloud)
        assert log is not None
        with log.open("rb") as handle:
            handle.seek(self._log_from)
            return sum(1 for line in handle if f'"{method} /remote.php/dav/calendars/'.encode() in line)
