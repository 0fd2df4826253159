"""The seeded data of the real-Nextcloud benchmark, generated from a fixed seed: notes, calendar
objects, contacts and files, each with what the measurement needs to know about them (the truth
a tool's answer is checked against). Nothing here talks to Nextcloud."""

from __future__ import annotations

import base64
import random
import struct
import zlib
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import vocabulary  # bench/real, on the path as this module is

__all__ = [
    "ANCHOR",
    "SPEC",
    "CalendarObject",
    "Contact",
    "FileItem",
    "Note",
    "calendar",
    "contacts",
    "files",
    "notes",
]

# Everything the generators depend on. A change here, to GENERATOR or to vocabulary.py makes a
# saved seed stale.
GENERATOR = 3
ANCHOR = date(2026, 11, 23)  # a Monday: "this week" of the seeded data; the calendar spans around it
SPEC: dict[str, Any] = {
    "generator": GENERATOR,
    "seed": 30,
    "anchor": ANCHOR.isoformat(),
    "notes": 5000,
    "note_categories": ["", "Work", "Work/Projects", "Personal", "Recipes", "Travel"],
    "marker_words": {"garden": 0.02, "lighthouse": 0.005},
    "single_events": 3000,
    "event_years_back": 8,
    "event_years_ahead": 2,
    "todos": 40,
    "contacts": 2000,
    "contact_photo_share": 0.1,
    "files": 50000,
    "big_folder_entries": 10000,
    "file_marker": "quarterly-report",
    "file_marker_count": 37,
}

_WORDS, _FIRST, _LAST = vocabulary.WORDS, vocabulary.FIRST_NAMES, vocabulary.LAST_NAMES

RARE_SURNAME = "Okonkwo-Larsen"  # the contacts search target: given to a known number of cards
RARE_SURNAME_COUNT = 7


def _rng(part: str) -> random.Random:
    return random.Random(f"{SPEC['seed']}:{part}")


def _sentence(rng: random.Random, extra: list[str]) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 16))]
    for word in extra:
        words.insert(rng.randrange(len(words) + 1), word)
    return " ".join(words).capitalize() + "."


def _moment(rng: random.Random, years_back: float, years_ahead: float = 0.0) -> int:
    anchor = datetime.combine(ANCHOR, datetime.min.time(), UTC)
    lo = anchor - timedelta(days=365.25 * years_back)
    hi = anchor + timedelta(days=365.25 * years_ahead)
    return int(lo.timestamp() + rng.random() * (hi - lo).total_seconds())


@dataclass
class Note:
    category: str
    title: str
    content: str
    mtime: int
    markers: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return f"Notes/{self.category + '/' if self.category else ''}{self.title}.md"


def notes() -> list[Note]:
    """SPEC['notes'] notes of 0.3-3 KB of Markdown prose; each marker word is in a known share."""
    rng = _rng("notes")
    out: list[Note] = []
    total = SPEC["notes"]
    chosen = {
        w: set(rng.sample(range(total), round(total * share))) for w, share in SPEC["marker_words"].items()
    }
    for i in range(total):
        markers = [w for w, idx in chosen.items() if i in idx]
        title = f"{' '.join(rng.choice(_WORDS) for _ in range(rng.randint(2, 5))).capitalize()} {i:04}"
        target = rng.randint(300, 3000)
        paragraphs: list[str] = [f"# {title}", ""]
        size = len(title)
        while size < target:
            kind = rng.random()
            if kind < 0.15:
                block = "\n".join(f"- {_sentence(rng, [])}" for _ in range(rng.randint(2, 5)))
            elif kind < 0.25:
                block = f"## {_sentence(rng, [])[:40]}"
            else:
                block = " ".join(_sentence(rng, []) for _ in range(rng.randint(2, 5)))
            paragraphs += [block, ""]
            size += len(block) + 2
        if markers:  # in the body, somewhere in the middle
            at = rng.randrange(2, len(paragraphs))
            paragraphs.insert(at, _sentence(rng, markers))
        category = rng.choice(SPEC["note_categories"])
        out.append(Note(category, title, "\n".join(paragraphs).rstrip() + "\n", _moment(rng, 9), markers))
    return out


@dataclass
class CalendarObject:
    href: str  # file name inside the calendar
    ics: str
    start: datetime | None  # a single event's start (None for recurring masters and tasks)
    recurring: bool = False


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


def _vevent(uid: str, start: datetime, minutes: int, summary: str, extra: list[str]) -> str:
    lines = [
        "BEGIN:VEVENT",
        f"UID:{uid}",
        f"DTSTAMP:{_stamp(start)}",
        f"DTSTART:{_stamp(start)}",
        f"DTEND:{_stamp(start + timedelta(minutes=minutes))}",
        f"SUMMARY:{summary}",
        *extra,
        "END:VEVENT",
    ]
    return "\r\n".join(lines)


def _vcalendar(*components: str) -> str:
    return "\r\n".join(
        ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//bench//real//EN", *components, "END:VCALENDAR", ""]
    )


def _recurring_masters() -> list[CalendarObject]:
    """Daily endless from 10 years back (more than 3,500 instances), weekly endless, weekly until,
    monthly, yearly; with EXDATEs and moved instances (RECURRENCE-ID, same day)."""
    anchor = datetime.combine(ANCHOR, datetime.min.time(), UTC)
    out: list[CalendarObject] = []

    def master(
        name: str, start: datetime, minutes: int, rule: str, exdates: list[datetime], moved: list[datetime]
    ) -> None:
        uid = f"bench-rec-{name}"
        extra = [f"RRULE:{rule}"] + [f"EXDATE:{_stamp(x)}" for x in exdates]
        parts = [_vevent(uid, start, minutes, f"Recurring {name}", extra)]
        for m in moved:
            parts.append(
                _vevent(
                    uid,
                    m + timedelta(hours=2),
                    minutes,
                    f"Recurring {name} (moved)",
                    [f"RECURRENCE-ID:{_stamp(m)}"],
                )
            )
        out.append(CalendarObject(f"{uid}.ics", _vcalendar(*parts), None, recurring=True))

    daily = anchor - timedelta(days=3653) + timedelta(hours=7, minutes=30)
    this_week = [anchor + timedelta(days=d, hours=7, minutes=30) for d in range(7)]
    master("daily-standup", daily, 15, "FREQ=DAILY", [this_week[2]], [this_week[3]])
    weekly = anchor - timedelta(days=7 * 400) + timedelta(hours=16)  # a Monday
    master(
        "weekly-review",
        weekly,
        60,
        "FREQ=WEEKLY;BYDAY=MO",
        [anchor - timedelta(days=7) + timedelta(hours=16)],
        [],
    )
    master(
        "weekly-course",
        anchor - timedelta(days=7 * 30) + timedelta(days=2, hours=18),
        90,
        f"FREQ=WEEKLY;UNTIL={_stamp(anchor + timedelta(days=7 * 20))}",
        [],
        [anchor + timedelta(days=2, hours=18)],
    )
    master("monthly-rent", anchor - timedelta(days=3000) + timedelta(hours=9), 30, "FREQ=MONTHLY", [], [])
    master("yearly-anniversary", datetime(2012, 11, 25, 12, tzinfo=UTC), 120, "FREQ=YEARLY", [], [])
    master(
        "weekday-gym",
        anchor - timedelta(days=365 * 6) + timedelta(hours=6),
        45,
        "FREQ=WEEKLY;BYDAY=TU,TH",
        [],
        [],
    )
    return out


def calendar() -> tuple[list[CalendarObject], list[CalendarObject]]:
    """(events, tasks): single events over the years around ANCHOR plus the recurring masters; VTODOs."""
    rng = _rng("calendar")
    events = _recurring_masters()
    for i in range(SPEC["single_events"]):
        start = datetime.fromtimestamp(_moment(rng, SPEC["event_years_back"], SPEC["event_years_ahead"]), UTC)
        start = start.replace(minute=rng.choice((0, 15, 30, 45)), second=0)
        uid = f"bench-ev-{i:05}"
        desc = f"DESCRIPTION:{_sentence(rng, [])}"
        loc = f"LOCATION:{rng.choice(_LAST)} {rng.choice(('Room', 'Cafe', 'Office', 'Park'))}"
        summary = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 4))).capitalize()
        ics = _vcalendar(_vevent(uid, start, rng.choice((30, 45, 60, 90, 120)), summary, [desc, loc]))
        events.append(CalendarObject(f"{uid}.ics", ics, start))
    tasks = []
    for i in range(SPEC["todos"]):
        due = datetime.fromtimestamp(_moment(rng, 0.5, 0.5), UTC)
        lines = [
            "BEGIN:VTODO",
            f"UID:bench-todo-{i:03}",
            f"DTSTAMP:{_stamp(due)}",
            f"SUMMARY:{_sentence(rng, [])[:60]}",
        ]
        lines += [
            f"DUE:{_stamp(due)}",
            "STATUS:" + ("COMPLETED" if i % 4 == 0 else "NEEDS-ACTION"),
            "END:VTODO",
        ]
        tasks.append(CalendarObject(f"bench-todo-{i:03}.ics", _vcalendar("\r\n".join(lines)), None))
    return events, tasks


def _png(rng: random.Random, size: int = 48) -> bytes:
    """A small opaque RGB PNG of coloured noise blocks (a stand-in contact photo, ~1-7 KB)."""
    rows = []
    palette = [bytes(rng.randrange(256) for _ in range(3)) for _ in range(6)]
    for y in range(size):
        row = bytearray(b"\x00")
        for x in range(size):
            row += palette[(x // 8 + y // 8 + rng.randrange(2)) % len(palette)]
        rows.append(bytes(row))
    raw = zlib.compress(b"".join(rows), 9)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


@dataclass
class Contact:
    uid: str
    vcard: str
    full_name: str
    has_photo: bool


def contacts() -> list[Contact]:
    """vCard 3.0 cards; a share of them with a PNG photo; RARE_SURNAME on a known number."""
    rng = _rng("contacts")
    rare = set(rng.sample(range(SPEC["contacts"]), RARE_SURNAME_COUNT))
    photos = set(rng.sample(range(SPEC["contacts"]), round(SPEC["contacts"] * SPEC["contact_photo_share"])))
    out = []
    for i in range(SPEC["contacts"]):
        first, last = rng.choice(_FIRST), RARE_SURNAME if i in rare else rng.choice(_LAST)
        uid = f"bench-card-{i:05}"
        lines = [
            "BEGIN:VCARD",
            "VERSION:3.0",
            f"UID:{uid}",
            f"FN:{first} {last}",
            f"N:{last};{first};;;",
            f"EMAIL;TYPE=INTERNET:{first.lower()}.{last.lower()}{i}@example.org",
            f"TEL;TYPE=CELL:+49 1{rng.randint(50, 79)} {rng.randint(1000000, 9999999)}",
            f"ORG:{rng.choice(_LAST)} {rng.choice(('GmbH', 'AG', 'Ltd', 'e.V.'))}",
            f"CATEGORIES:{rng.choice(('Friends', 'Work', 'Family', 'Clients'))}",
        ]
        if i in photos:
            encoded = base64.b64encode(_png(rng)).decode()
            folded = "\r\n ".join(encoded[j : j + 74] for j in range(0, len(encoded), 74))
            lines.append(f"PHOTO;ENCODING=b;TYPE=PNG:{folded}")
        lines.append("END:VCARD")
        out.append(Contact(uid, "\r\n".join(lines) + "\r\n", f"{first} {last}", i in photos))
    return out


@dataclass
class FileItem:
    path: str  # inside alice's files, no leading slash
    content: bytes
    mtime: int


_EXTS = (".txt", ".md", ".csv", ".json", ".log", ".pdf", ".jpg", ".odt", ".xlsx", ".py")
BIG_FOLDER = "Archive/Scans"
SMALL_FOLDER = "Projects/project-07"


def files() -> list[FileItem]:
    """SPEC['files'] small files: BIG_FOLDER holds exactly SPEC['big_folder_entries'] of them, the
    rest is a tree Projects/project-NN/<sub>/; SPEC['file_marker'] is in a known number of names."""
    rng = _rng("files")
    out: list[FileItem] = []
    total, big = SPEC["files"], SPEC["big_folder_entries"]
    marked = set(rng.sample(range(total), SPEC["file_marker_count"]))
    subs = ("docs", "data", "images", "drafts", "old", "exports")
    for i in range(total):
        ext = rng.choice(_EXTS)
        stem = "-".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))
        if i in marked:
            stem = f"{SPEC['file_marker']}-{stem}"
        name = f"{stem}-{i:05}{ext}"
        if i < big:
            folder = BIG_FOLDER
        else:
            folder = f"Projects/project-{rng.randrange(60):02}/{rng.choice(subs)}"
            if rng.random() < 0.3:
                folder += f"/{rng.choice(('2019', '2020', '2021', '2022', '2023', '2024', '2025'))}"
        body = (" ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 300))) + "\n").encode()
        out.append(FileItem(f"{folder}/{name}", body, _moment(rng, 10)))
    return out
