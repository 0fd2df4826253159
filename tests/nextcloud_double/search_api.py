"""Unified search of the double, shaped like the recorded Nextcloud 29 (`search_*.txt`) and, with
`newer`, 34 (`nextcloud34/search_*.txt`).

Like the real server: the files provider matches file names (not contents), newest first, and
pages with a numeric cursor; the notes provider of Notes 4.13.1 never finds anything (its search
cannot see the notes folder, see the fixtures README), that of Notes 6.0.2 finds notes by title
and content; an unknown provider is a 500.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from tests.nextcloud_double.ocs_api import ocs_response

__all__ = ["PROVIDERS", "PROVIDERS_34", "search_endpoint"]

PROVIDERS: list[dict[str, Any]] = [
    {"id": "notes", "appId": "notes", "name": "Notes", "icon": "/apps/notes/img/notes.svg", "order": 4},
    {"id": "files", "appId": "files", "name": "Files", "icon": "/apps/files/img/app.svg", "order": 5},
    {"id": "systemtags", "appId": "systemtags", "name": "Tags", "icon": "", "order": 6},
    {"id": "comments", "appId": "comments", "name": "Comments", "icon": "", "order": 10},
    {"id": "settings_apps", "appId": "settings", "name": "Apps", "icon": "", "order": 100},
    {"id": "settings", "appId": "settings", "name": "Settings", "icon": "", "order": 500},
]


PROVIDERS_34: list[dict[str, Any]] = [
    *PROVIDERS[:3],
    {"id": "circles", "appId": "circles", "name": "Teams", "icon": "", "order": 9},
    PROVIDERS[3],
    {"id": "appstore", "appId": "settings", "name": "Apps", "icon": "", "order": 100},
    PROVIDERS[5],
]


def _listing(providers: list[dict[str, Any]], newer: bool) -> list[dict[str, Any]]:
    extra = {"isExternalProvider": False} if newer else {}  # what 34 adds
    return [
        {**p, **extra, "triggers": [p["id"]], "filters": {"term": "string"}, "inAppSearch": False}
        for p in providers
    ]


def _notes(notes: list[tuple[int, str, str]], term: str, base: str) -> list[dict[str, Any]]:
    """Notes 6's provider: notes whose title or content holds the term."""
    needle = term.casefold()
    return [
        {
            "thumbnailUrl": "",
            "title": title,
            "subline": content.partition("\n")[0],
            "resourceUrl": f"{base}/apps/notes/note/{note_id}",
            "icon": "icon-notes-trans",
            "rounded": False,
            "attributes": [],
        }
        for note_id, title, content in notes
        if needle and (needle in title.casefold() or needle in content.casefold())
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


async def search_endpoint(
    request: Request,
    files_root: Path,
    user: str,
    endpoint: str,
    *,
    newer: bool = False,
    notes: list[tuple[int, str, str]] = (),  # type: ignore[assignment]
) -> Response:
    """`search/providers` and `search/providers/<id>/search` (`newer`: as Nextcloud 34, whose
    Notes provider searches `notes`: id, title, content)."""
    providers = PROVIDERS_34 if newer else PROVIDERS
    if endpoint == "search/providers":
        return ocs_response(request, _listing(providers, newer))
    provider = endpoint.removeprefix("search/providers/").removesuffix("/search")
    names = {p["id"]: p["name"] for p in providers}
    if provider not in names:  # 34's OCS meta says 996 (its server-error code) where 29's says 500
        response = ocs_response(request, [], 500, "Internal Server Error\n")
        return _meta_code(response, 996) if newer else response
    term = request.query_params.get("term", "")
    limit = int(request.query_params.get("limit") or 5)
    offset = int(request.query_params.get("cursor") or 0)
    base = f"{request.url.scheme}://{request.url.netloc}"
    if provider != "files":
        found = _notes(list(notes), term, base) if newer and provider == "notes" else []
        return ocs_response(
            request, {"name": names[provider], "isPaginated": False, "entries": found, "cursor": None}
        )
    entries = _files(files_root / user, term, base) if term else []
    page = {"name": "Files", "isPaginated": True, "entries": entries[offset : offset + limit]}
    return ocs_response(request, {**page, "cursor": offset + limit})


def _meta_code(response: Response, code: int) -> Response:
    """The same OCS answer with another `statuscode` in its meta (JSON answers only)."""
    if "json" not in (response.media_type or ""):
        return response
    body = json.loads(bytes(response.body))
    body["ocs"]["meta"]["statuscode"] = code
    return Response(json.dumps(body), status_code=response.status_code, media_type="application/json")
