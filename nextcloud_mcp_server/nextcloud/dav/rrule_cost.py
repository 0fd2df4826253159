"""What a recurrence rule costs: the candidates dateutil walks through, per period and per day.

dateutil walks a rule period by period from its DTSTART (a FREQ=SECONDLY rule one candidate a
second, whatever its filters), and the BY* lists finer than FREQ multiply what one period holds
(FREQ=HOURLY;BYMINUTE=0..59;BYSECOND=0..59 holds 3600 a period: every second, under another
FREQ name). Reading costs each rule before expanding it (`recurrence.rule_steps`); writing
refuses an endless rule by the same measure, per day (`per_day`), not by its FREQ name.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_ENDLESS_PER_DAY", "PERIOD", "first", "frequency", "interval", "per_day", "per_period"]

PERIOD = {
    "SECONDLY": 1,
    "MINUTELY": 60,
    "HOURLY": 3600,
    "DAILY": 86400,
    "WEEKLY": 7 * 86400,
    "MONTHLY": 28 * 86400,  # the shortest month: never underestimates the periods
    "YEARLY": 365 * 86400,
}
_RANK = {name: rank for rank, name in enumerate(PERIOD)}
# An endless rule may cost at most an hourly event's work: 24 candidates a day.
MAX_ENDLESS_PER_DAY = 24


def first(recur: Any, name: str) -> Any:
    values = recur.get(name)
    return values[0] if values else None


def frequency(recur: Any) -> str | None:
    freq = str(first(recur, "FREQ") or "").upper()
    return freq if freq in PERIOD else None


def interval(recur: Any) -> int:
    return max(1, int(first(recur, "INTERVAL") or 1))


def per_period(recur: Any) -> int:
    """An upper bound on the candidates one period of the rule holds: the BY* lists finer than
    its FREQ multiply (BYSECOND under MINUTELY and coarser, BYMINUTE under HOURLY and coarser,
    ...), and day filters make a week, month or year hold up to that many days."""
    freq = frequency(recur)
    if freq is None:
        return 0
    rank, count = _RANK[freq], 1
    for name, finer_than in (("BYSECOND", 0), ("BYMINUTE", 1), ("BYHOUR", 2)):
        if rank > finer_than and recur.get(name):
            count *= len(recur[name])
    day_filters = any(recur.get(k) for k in ("BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO"))
    if freq == "WEEKLY" and day_filters:
        count *= 7
    elif freq == "MONTHLY" and day_filters:
        count *= 31
    elif freq == "YEARLY":
        count *= 366 if day_filters else len(recur.get("BYMONTH") or [1])
    return count


def per_day(recur: Any) -> float:
    """An upper bound on the candidates (and so the occurrences) the rule brings each day, on
    average: what a period holds, times the periods a day holds."""
    freq = frequency(recur)
    if freq is None:
        return 0.0
    return per_period(recur) * 86400 / (PERIOD[freq] * interval(recur))
