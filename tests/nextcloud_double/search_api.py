"""Unified search of the double, shaped like the recorded Nextcloud 29 (`search_*.txt`).

Like the real server: the files provider matches file names (not contents), newest first, and
pages with a numeric cursor; the notes provider of Notes 4.13.1 never finds anything (its search
cannot see the notes folder, see the fixtures README); an unknown provider is a 500.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from tests.nextcloud_double.ocs_api import ocs_response

__all__ = ["PROVIDERS", "search_endpoint"]

PROVIDERS: list[dict[str, Any]] = [
    {"id": "notes", "appId": "notes", "name": "Notes", "icon": "/apps/notes/img/notes.svg", "order": 4},
    {"id": "files", "appId": "files", "name": "Files", "icon": "/apps/files/img/app.svg", "order": 5},
    {"id": "systemtags", "appId": "systemtags", "name": "Tags", "icon": "", "order": 6},
    {"id": "comments", "appId": "comments", "name": "Comments", "icon": "", "order": 10},
    {"id": "settings_apps", "appId": "settings", "name": "Apps", "icon": "", "order": 100},
    {"id": "settings", "appId": "settings", "name": "Settings", "icon": "", "order": 500},
]


def _listing() -> list[dict[str, Any]]:
    return [
        {**p, "triggers": [p["id"]], "filters": {"term": "string"}, "inAppSearch": False} for p in PROVIDERS
    ]


def _files(root: Path, term: str, base: str) -> list[dict[str, Any]]:
    needle = term.casefold()
    found = [p for p in root.rglob("*") if p.is_file() and needle in p.name.casefold()]
    found.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
    entries = []
    for path in found:
        relative = path.relative_to(root)
        parent = str(relative.parent)
        file_id = str(path.stat().st_ino % 10**9)
        entries.append(
            {
                "thumbnailUrl": f"{base}/core/preview?fileId={file_id}&x=32&y=32",
                "title": path.name,
                "subline": "" if parent == "." else f"in {parent}",
                "resourceUrl": f"{base}/f/{file_id}",
                "icon": "",
                "rounded": False,
                "attributes": {"fileId": file_id, "path": f"/{relative.as_posix()}"},
            }
        )
    return entries


async def search_endpoint(request: Request, files_root: Path, user: str, endpoint: str) -> Response:
    """`search/providers` and `search/providers/<id>/search`."""
    if endpoint == "search/providers":
        return ocs_response(request, _listing())
    provider = endpoint.removeprefix("search/providers/").removesuffix("/search")
    names = {p["id"]: p["name"] for p in PROVIDERS}
    if provider not in names:
        return ocs_response(request, [], 500, "Internal Server Error\n")
    term = request.query_params.get("term", "")
    limit = int(request.query_params.get("limit") or 5)
    offset = int(request.query_params.get("cursor") or 0)
    if provider != "files":
        return ocs_response(
            request, {"name": names[provider], "isPaginated": False, "entries": [], "cursor": None}
        )
    base = f"{request.url.scheme}://{request.url.netloc}"
    entries = _files(files_root / user, term, base) if term else []
    page = {"name": "Files", "isPaginated": True, "entries": entries[offset : offset + limit]}
    return ocs_response(request, {**page, "cursor": offset + limit})
