"""A rule's cost per day is what dateutil walks through, whatever its FREQ is called."""

from __future__ import annotations

import icalendar
import pytest

from nextcloud_mcp_server.nextcloud.dav import rrule_cost

EVERY = ",".join(str(n) for n in range(60))


@pytest.mark.parametrize(
    ("rule", "per_day"),
    [
        ("FREQ=SECONDLY", 86400),
        (f"FREQ=HOURLY;BYMINUTE={EVERY};BYSECOND={EVERY}", 86400),  # every second, as HOURLY
        ("FREQ=SECONDLY;INTERVAL=3600", 24),  # hourly, as SECONDLY
        ("FREQ=MINUTELY;INTERVAL=5", 288),
        ("FREQ=HOURLY", 24),
        ("FREQ=HOURLY;BYMINUTE=0,30", 48),
        ("FREQ=DAILY", 1),
        ("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9,10,11,12,13,14,15,16,17", 9),
    ],
)
def test_the_cost_per_day_counts_the_by_lists_finer_than_the_frequency(rule: str, per_day: float) -> None:
    assert rrule_cost.per_day(icalendar.vRecur.from_ical(rule)) == pytest.approx(per_day)
