"""What is measured: per case, this server's tool and arguments, the published package's tool for the
same answer (or None), and a check of this server's answer against the manifest, so that a fast
wrong answer cannot pass."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

__all__ = ["Case", "cases"]

Check = Callable[[dict[str, Any]], str | None]  # None when plausible, else what is wrong


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    args: dict[str, Any]
    published: tuple[str, dict[str, Any]] | None
    check: Check
    floor_expect: int | None  # what the floor function must return (None: any positive number)


def _expect(found: Any, wanted: Any, what: str) -> str | None:
    return None if found == wanted else f"{what}: {found!r}, expected {wanted!r}"


def cases(m: dict[str, Any]) -> list[Case]:
    notes, cal, cards, files = m["notes"], m["calendar"], m["contacts"], m["files"]
    garden = set(notes["marker_ids"]["garden"])
    weeks = cal["weeks"]

    def week_args(name: str) -> dict[str, Any]:
        lower = datetime.fromisoformat(weeks[name]["start"])
        return {
            "start": lower.date().isoformat(),
            "end": (lower + timedelta(days=7)).date().isoformat(),
            "timezone": "UTC",
        }

    def published_week(name: str) -> dict[str, Any]:
        a = week_args(name)
        return {"start_date": a["start"], "end_date": a["end"], "limit": 200, "search_all_calendars": True}

    def week_check(name: str) -> Check:
        return lambda a: _expect(len(a["events"]), weeks[name]["instances"], "occurrences in the week")

    def search_check(a: dict[str, Any]) -> str | None:
        ids = {h["id"] for h in a["hits"]}
        if not ids <= garden:
            return f"hits that do not contain the word: {sorted(ids - garden)[:5]}"
        return _expect(len(ids), min(20, len(garden)), "hits")

    def list_check(a: dict[str, Any]) -> str | None:
        return _expect(a["total"], notes["count"], "total") or _expect(
            [n["id"] for n in a["notes"]], notes["newest_100_ids"], "the newest 100 ids"
        )

    big, small = files["big_folder"], files["small_folder"]
    surname = cards["rare_surname"]
    return [
        Case(
            "notes_list",
            "nc_notes_list_notes",
            {"limit": 100},
            ("nc_notes_list_notes", {"limit": 100}),
            list_check,
            notes["count"],
        ),
        Case(
            "notes_search",
            "nc_notes_search_notes",
            {"query": "garden"},
            ("nc_notes_search_notes", {"query": "garden"}),
            search_check,
            min(20, len(garden)),
        ),
        Case(
            "note_get",
            "nc_notes_get_note",
            {"note_id": notes["sample_id"]},
            ("nc_notes_get_note", {"note_id": notes["sample_id"]}),
            lambda a: _expect(a["id"], notes["sample_id"], "id"),
            notes["sample_id"],
        ),
        Case(
            "events_week",
            "nc_calendar_list_events",
            week_args("this_week"),
            ("nc_calendar_list_events", published_week("this_week")),
            week_check("this_week"),
            None,
        ),
        Case(
            "events_week_5y_ago",
            "nc_calendar_list_events",
            week_args("five_years_ago"),
            ("nc_calendar_list_events", published_week("five_years_ago")),
            week_check("five_years_ago"),
            None,
        ),
        Case(
            "availability_week",
            "nc_calendar_find_availability",
            {**week_args("this_week"), "duration_minutes": 60},
            (
                "nc_calendar_find_availability",
                {
                    "duration_minutes": 60,
                    "date_range_start": week_args("this_week")["start"],
                    "date_range_end": week_args("this_week")["end"],
                },
            ),
            lambda a: None if a["slots"] else "no free slot in a week",
            None,
        ),
        Case(
            "contacts_search",
            "nc_contacts_search",
            {"query": surname},
            ("nc_contacts_search_contacts", {"query": surname}),
            lambda a: _expect(len(a["contacts"]), cards["rare_surname_count"], "contacts"),
            cards["rare_surname_count"],
        ),
        Case(
            "list_big_folder",
            "nc_webdav_list_directory",
            {"path": big},
            ("nc_webdav_list_directory", {"path": big}),
            lambda a: _expect(a["total"], files["big_folder_entries"], "entries"),
            files["big_folder_entries"],
        ),
        Case(
            "list_small_folder",
            "nc_webdav_list_directory",
            {"path": small},
            ("nc_webdav_list_directory", {"path": small}),
            lambda a: _expect(a["total"], files["small_folder_entries"], "entries"),
            files["small_folder_entries"],
        ),
        Case(
            "files_search",
            "nc_webdav_search_files",
            {"name_pattern": files["marker"]},
            ("nc_webdav_find_by_name", {"pattern": f"%{files['marker']}%", "limit": 50}),
            lambda a: _expect(len(a["files"]), min(50, files["marker_count"]), "files"),
            min(50, files["marker_count"]),
        ),
        Case(
            "unified_search",
            "nc_search",
            {"term": "garden"},
            None,
            lambda a: None if any(r["provider"] == "notes" for r in a["results"]) else "no note found",
            None,
        ),
        Case(
            "todos",
            "nc_calendar_list_todos",
            {},
            ("nc_calendar_list_todos", {"calendar_name": "tasks", "status": "NEEDS-ACTION"}),
            lambda a: _expect(len(a["todos"]), cal["open_todos"], "open tasks"),
            cal["open_todos"],
        ),
    ]
