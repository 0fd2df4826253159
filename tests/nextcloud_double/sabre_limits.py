"""Sabre's recurrence limit, which Radicale lacks: Nextcloud 29 answers a calendar-query REPORT
with a time-range by expanding each recurring event, and when one yields more than 3500 instances
from its DTSTART to the end of the range it fails the whole REPORT with HTTP 500
(`Sabre\\VObject\\Recur\\MaxInstancesExceededException: Recurring events are only allowed to
generate 3500`, seen in the real server's log). Radicale instead expands without limit and hangs."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree
from xml.sax.saxutils import escape

import icalendar
import recurring_ical_events
from dateutil import rrule

__all__ = ["MAX_INSTANCES", "exceeds_instances", "index_query", "open_range", "stored_span"]

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


# What Nextcloud's CalDavBackend answers from its index alone: a calendar-query whose only filter is
# a VEVENT time-range with just a start or just an end is "100% accurate" in SQL (calendarQuery,
# 29 and 34) on the columns firstoccurence and lastoccurence, so nothing is expanded; a rule
# without an end is stored with lastoccurence = MAX_DATE (2038-01-01). Radicale would expand every
# rule up to the open end instead (and hang on an endless one), so the double answers these itself.
MAX_DATE = datetime(2038, 1, 1, tzinfo=UTC)
_C = "{urn:ietf:params:xml:ns:caldav}"
_D = "{DAV:}"


def _moment(value: Any) -> datetime:
    """A DTSTART/DTEND value as Sabre stores it: dates and floating times in UTC."""
    if not isinstance(value, datetime):
        value = datetime.combine(value, datetime.min.time())
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def stored_span(ics: bytes) -> tuple[datetime, datetime] | None:
    """firstoccurence and lastoccurence as CalDavBackend::getDenormalizedData computes them."""
    calendar = icalendar.Calendar.from_ical(ics)
    events = [e for e in calendar.walk("VEVENT") if "DTSTART" in e]
    if not events:
        return None
    master = next((e for e in events if "RECURRENCE-ID" not in e), events[0])
    start = _moment(master["DTSTART"].dt)
    if "RRULE" not in master and len(events) == 1:
        if "DTEND" in master:
            return start, _moment(master["DTEND"].dt)
        if "DURATION" in master:
            return start, start + master["DURATION"].dt
        return start, start + (
            timedelta(days=1) if not isinstance(master["DTSTART"].dt, datetime) else timedelta()
        )
    rule = master.get("RRULE")
    if rule is not None and "COUNT" not in rule and "UNTIL" not in rule:
        return start, MAX_DATE
    spans = [
        (_moment(o["DTSTART"].dt), _moment(o["DTEND"].dt if "DTEND" in o else o["DTSTART"].dt))
        for o in recurring_ical_events.of(calendar).between(datetime(1900, 1, 1), MAX_DATE)
    ]
    if not spans:
        return start, start
    return min(s for s, _ in spans), max(e for _, e in spans)


def open_range(body: bytes) -> tuple[datetime | None, datetime | None] | None:
    """The bounds of a calendar-query answered from the index alone (see above), else None."""
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        return None
    if root.tag != f"{_C}calendar-query" or root.find(f".//{_C}prop-filter") is not None:
        return None
    found = root.findall(f".//{_C}time-range")
    event = root.find(f"{_C}filter/{_C}comp-filter/{_C}comp-filter[@name='VEVENT']")
    if len(found) != 1 or event is None or event.find(f"{_C}time-range") is None:
        return None
    start, end = found[0].get("start"), found[0].get("end")
    if (start is None) == (end is None):
        return None
    parse = lambda text: datetime.strptime(text, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)  # noqa: E731
    return (parse(start) if start else None), (parse(end) if end else None)


def index_query(collection: Path, href: str, body: bytes) -> bytes | None:
    """For a query answered from the index: the calendar-multiget REPORT (same properties) of the
    objects it matches, for Radicale to answer; None for any other REPORT."""
    bounds = open_range(body)
    if bounds is None:
        return None
    start, end = bounds
    hrefs = []
    for entry in sorted(collection.glob("*.ics")):
        span = stored_span(entry.read_bytes())
        if (
            span is None
            or (start is not None and not span[1] > start)
            or (end is not None and not span[0] < end)
        ):
            continue
        hrefs.append(f"<d:href>{escape(href.rstrip('/') + '/' + quote(entry.name))}</d:href>")
    prop = ElementTree.fromstring(body).find(f"{_D}prop")
    props = (
        ElementTree.tostring(prop, encoding="unicode")
        if prop is not None
        else "<d:prop><d:getetag/></d:prop>"
    )
    return (
        '<?xml version="1.0"?><c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
        f"{props}{''.join(hrefs)}</c:calendar-multiget>"
    ).encode()
