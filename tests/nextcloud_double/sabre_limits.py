"""Sabre's recurrence limit, which Radicale lacks: Nextcloud 29 answers a calendar-query REPORT
with a time-range by expanding each recurring event, and when one yields more than 3500 instances
from its DTSTART to the end of the range it fails the whole REPORT with HTTP 500
(`Sabre\\VObject\\Recur\\MaxInstancesExceededException: Recurring events are only allowed to
generate 3500`, seen in the real server's log). Radicale instead expands without limit and hangs."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path
from xml.etree import ElementTree

import icalendar
from dateutil import rrule

__all__ = ["MAX_INSTANCES", "exceeds_instances"]

MAX_INSTANCES = 3500


def _range_end(body: bytes) -> datetime | None:
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        return None
    found = root.find(".//{urn:ietf:params:xml:ns:caldav}time-range")
    end = found.get("end") if found is not None else None
    return datetime.strptime(end, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC) if end else None


def exceeds_instances(collection: Path, body: bytes) -> bool:
    """Whether a time-range REPORT on this calendar folder would fail on a real Nextcloud."""
    end = _range_end(body)
    if end is None or not collection.is_dir():
        return False
    for entry in collection.glob("*.ics"):
        calendar = icalendar.Calendar.from_ical(entry.read_bytes())
        for event in calendar.walk("VEVENT"):
            if "RRULE" not in event or "DTSTART" not in event:
                continue
            start = event["DTSTART"].dt
            if not isinstance(start, datetime):
                start = datetime.combine(start, datetime.min.time())
            if start.tzinfo is None:
                start = start.replace(tzinfo=UTC)
            rule = rrule.rrulestr(event["RRULE"].to_ical().decode(), dtstart=start)
            instances = itertools.takewhile(lambda moment: moment < end, rule)
            if sum(1 for _ in itertools.islice(instances, MAX_INSTANCES + 1)) > MAX_INSTANCES:
                return True
    return False
