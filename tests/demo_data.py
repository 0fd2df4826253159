"""What `make demo` puts in the demo user's stand-in Nextcloud: notes, two events this week, a
task and a few files, added through the double's HTTP APIs as any Nextcloud client would."""

from __future__ import annotations

import datetime as dt

import httpx

__all__ = ["FILES", "NOTES", "USERNAME", "DemoError", "seed"]

USERNAME = "demo"


class DemoError(Exception):
    """Start-up failed; the message is the one line shown to the user."""


NOTES = (
    (
        "Work",
        "Project kickoff",
        "# Project kickoff\n\nGoals for the quarter:\n\n- Ship the calendar sync\n"
        "- Write the user guide\n- Plan the beta with 20 testers\n",
    ),
    (
        "Work",
        "Meeting notes",
        "# Meeting notes\n\nDecisions:\n\n- Weekly release on Thursdays\n"
        "- Anna owns the migration script\n\nOpen question: which CI runners do we keep?\n",
    ),
    (
        "Personal",
        "Shopping list",
        "# Shopping list\n\n- Coffee beans\n- Oat milk\n- Batteries (AA)\n- Birthday card for Sam\n",
    ),
)
FILES = (
    ("Documents/Welcome.md", "# Welcome\n\nThis is the demo user's stand-in Nextcloud.\n"),
    ("Documents/Budget 2026.csv", "month,planned,spent\nJanuary,1200,1130\nFebruary,1200,1275\n"),
    ("Projects/Website/roadmap.txt", "Q1: new landing page\nQ2: blog\nQ3: shop\n"),
)


def _ics(component: str, uid: str, lines: list[str]) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    body = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//nextcloud-mcp-server//demo//EN",
        f"BEGIN:{component}",
        f"UID:{uid}",
        f"DTSTAMP:{stamp}",
        *lines,
        f"END:{component}",
        "END:VCALENDAR",
    ]
    return "\r\n".join(body) + "\r\n"


def _utc(day: dt.date, hour: int, minute: int = 0) -> str:
    return dt.datetime.combine(day, dt.time(hour, minute)).strftime("%Y%m%dT%H%M%SZ")


def seed(client: httpx.Client, today: dt.date) -> None:
    """Notes, two events this week in `personal`, a task in a `tasks` list (Nextcloud's personal
    calendar takes events only, as the Tasks app knows), and files in folders, through the
    double's HTTP APIs as any Nextcloud client would add them."""

    def ok(response: httpx.Response) -> None:
        if response.status_code >= 300:
            raise DemoError(
                f"seeding the double failed: {response.request.method} {response.url.path} "
                f"answered {response.status_code}"
            )

    for category, title, content in NOTES:
        ok(
            client.post(
                "/index.php/apps/notes/api/v1/notes",
                json={"title": title, "category": category, "content": content},
            )
        )

    sunday = today + dt.timedelta(days=6 - today.weekday())
    later = min(today + dt.timedelta(days=2), sunday)  # both events stay within this week
    calendar = f"/remote.php/dav/calendars/{USERNAME}/personal"
    items = {
        "demo-kickoff": _ics(
            "VEVENT",
            "demo-kickoff",
            [
                f"DTSTART:{_utc(today, 14)}",
                f"DTEND:{_utc(today, 15)}",
                "SUMMARY:Project kickoff meeting",
                "LOCATION:Room 2.14",
                "DESCRIPTION:Agenda in the note 'Project kickoff'.",
            ],
        ),
        "demo-dentist": _ics(
            "VEVENT",
            "demo-dentist",
            [
                f"DTSTART:{_utc(later, 10, 30)}",
                f"DTEND:{_utc(later, 11, 15)}",
                "SUMMARY:Dentist appointment",
                "LOCATION:Main Street 12",
            ],
        ),
        "demo-report": _ics(
            "VTODO",
            "demo-report",
            [
                f"DUE;VALUE=DATE:{(today + dt.timedelta(days=3)).strftime('%Y%m%d')}",
                "SUMMARY:Send the quarterly report",
                "PRIORITY:1",
                "STATUS:NEEDS-ACTION",
            ],
        ),
    }
    tasks = f"/remote.php/dav/calendars/{USERNAME}/tasks"
    ok(
        client.request(
            "MKCALENDAR",
            f"{tasks}/",
            content='<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop>'
            "<d:displayname>Tasks</d:displayname><c:supported-calendar-component-set>"
            '<c:comp name="VTODO"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>',
        )
    )
    for uid, ics in items.items():
        folder = tasks if ics.count("BEGIN:VTODO") else calendar
        ok(client.put(f"{folder}/{uid}.ics", content=ics, headers={"Content-Type": "text/calendar"}))

    files = f"/remote.php/dav/files/{USERNAME}"
    folders = sorted(
        {"/".join(path.split("/")[: i + 1]) for path, _ in FILES for i in range(path.count("/"))}
    )
    for folder in folders:
        ok(client.request("MKCOL", f"{files}/{folder}"))
    for path, text in FILES:
        ok(client.put(f"{files}/{path}", content=text.encode()))
