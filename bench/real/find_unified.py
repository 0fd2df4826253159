"""Nextcloud's unified search on the find benchmark's queries (find_measure.py): its files,
notes and calendar providers, 10 entries each, interleaved as one list, scored like `nc_find`."""

from __future__ import annotations

from typing import Any

import httpx
from find_report import Labels, ranked_over

__all__ = ["rank_unified", "unified"]

OCS = {"OCS-APIRequest": "true", "Accept": "application/json"}
PROVIDERS = ("files", "notes", "calendar")


async def unified(client: httpx.AsyncClient, labels: Labels, query: str) -> list[str | None]:
    """Nextcloud's unified search: the files, notes and calendar providers (10 entries each),
    interleaved as one list."""
    per: list[list[str | None]] = []
    for provider in PROVIDERS:
        answer = await client.get(
            f"/ocs/v2.php/search/providers/{provider}/search",
            params={"term": query, "limit": 10},
            headers=OCS,
        )
        entries = answer.json()["ocs"]["data"]["entries"] if answer.status_code == 200 else []
        found: list[str | None] = []
        for e in entries:
            if provider == "files":
                found.append(labels.by_name.get(e.get("title", "")))
            elif provider == "notes":
                found.append(labels.by_note_title.get(e.get("title", "")))
            else:
                found.append(labels.by_event_title.get(e.get("title", "")))
        per.append(found)
    merged: list[str | None] = []
    for i in range(10):
        merged += [found[i] for found in per if i < len(found)]
    return merged


async def rank_unified(
    client: httpx.AsyncClient, labels: Labels, queries: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    out = {}
    for kind, items in queries.items():
        out[kind] = await ranked_over(items, lambda query: unified(client, labels, query))
        print(f"[unified] {kind:10} {out[kind]}", flush=True)
    return out
