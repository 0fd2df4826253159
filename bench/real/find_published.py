"""The PyPI package's searches on the find benchmark's queries (find_measure.py): it has no search
of files' contents without its vector sync (Qdrant and an embedding service, of notes and tagged
files), so what it offers a client by words is measured: `nc_notes_search_notes` (title and
content of notes) and `nc_webdav_search_files` (names, `%query%`), their hits interleaved. Then
its vector search where it runs here (find_published_vector.py), under the key "vector"."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from _mcp import published_env
from find_published_vector import published_vector_ranking
from find_report import ranked_over
from mcp import ClientSession, StdioServerParameters, stdio_client
from published import ensure_installed

__all__ = ["published_ranking"]

TOOL = "nc_notes_search_notes + nc_webdav_search_files"


class _Labels(Protocol):
    by_name: dict[str, str]
    by_note_title: dict[str, str]


async def _ranked(session: ClientSession, labels: _Labels, query: str) -> list[str | None]:
    notes = await session.call_tool("nc_notes_search_notes", {"query": query})
    found_notes = [
        labels.by_note_title.get(str(r.get("title")))
        for r in (notes.structured_content or {}).get("results", [])
    ][:10]
    pattern = "%" + query.replace("%", "").replace("_", "") + "%"
    files = await session.call_tool("nc_webdav_search_files", {"name_pattern": pattern, "limit": 10})
    found_files = [
        labels.by_name.get(str(r.get("name") or r.get("path", "").rpartition("/")[2]))
        for r in (files.structured_content or {}).get("results", [])
    ][:10]
    merged: list[str | None] = []
    for i in range(10):
        merged += [x[i] for x in (found_notes, found_files) if i < len(x)]
    return merged


async def published_ranking(
    url: str, password: str, work: Path, labels: _Labels, queries: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    script = ensure_installed()
    folder = work / "published"
    folder.mkdir(exist_ok=True)
    env = published_env(url, "alice", password, folder)
    params = StdioServerParameters(
        command=str(script), args=["run", "--transport", "stdio"], env=env, cwd=str(folder)
    )
    out: dict[str, Any] = {"tool": TOOL}
    with open(folder / "published.log", "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for kind, items in queries.items():
                out[kind] = await ranked_over(items, lambda query: _ranked(session, labels, query))
    try:
        out["vector"] = await published_vector_ranking(url, password, work, labels, queries)
    except Exception as exc:  # recorded: the rest is still reported
        out["vector"] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    return out
