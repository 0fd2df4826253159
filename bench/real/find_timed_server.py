"""The MCP server with timers around the parts of an `nc_find` call (find_profile.py starts it).

Each timed part appends a line `{"part", "start", "seconds"}` to the file FIND_PROFILE_LOG names;
`call` begins when the tool reads its runtime and ends with the index's status (its last step).
Only what exists in the code being run is timed, so older checkouts (PYTHONPATH) run too.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
import time
from typing import Any

from nextcloud_mcp_server.index import confirm, meaning, sqlite, sqlite_vectors
from nextcloud_mcp_server.index import embedding as embedding_module
from nextcloud_mcp_server.toolsets.find import tools

try:  # newer checkouts: the passages kept in memory (ADR 0095)
    from nextcloud_mcp_server.index import vector_cache
except ImportError:  # pragma: no cover - older checkouts
    vector_cache = None  # type: ignore[assignment]

LOG: list[Any] = []  # the open log, once `install` ran


def _record(part: str, start: float) -> None:
    LOG[0].write(json.dumps({"part": part, "start": start, "seconds": time.perf_counter() - start}) + "\n")


def _timed(owner: Any, name: str, part: str) -> None:
    original = getattr(owner, name, None)
    if original is None:
        return
    if inspect.iscoroutinefunction(original):

        @functools.wraps(original)
        async def waited(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                _record(part, start)

        setattr(owner, name, waited)
        return

    @functools.wraps(original)
    def ran(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            _record(part, start)

    setattr(owner, name, ran)


def _begin(original: Any) -> Any:
    @functools.wraps(original)
    def begun(*args: Any, **kwargs: Any) -> Any:
        _record("begin", time.perf_counter())
        return original(*args, **kwargs)

    return begun


def install() -> None:
    LOG.append(open(os.environ["FIND_PROFILE_LOG"], "a", buffering=1))  # noqa: SIM115 - for the process's life
    tools.runtime_of = _begin(tools.runtime_of)  # type: ignore[attr-defined]
    _timed(tools, "consent_to_index", "consent")
    _timed(tools, "own_round", "round")
    _timed(tools, "confirmed", "confirm")
    _timed(confirm, "files_named", "confirm: SEARCH")
    _timed(confirm, "present_of_kind", "confirm: other kinds' listings")
    _timed(confirm, "_notes_present", "confirm: notes by id")
    _timed(confirm, "_folders_present", "confirm: folders listed")
    _timed(embedding_module.ShippedModel, "embed", "embed question")
    _timed(sqlite.SQLiteIndex, "search", "words search")
    _timed(sqlite.SQLiteIndex, "status", "status")
    _timed(sqlite_vectors.SQLiteVectors, "mark", "change mark")
    _timed(sqlite_vectors.SQLiteVectors, "candidates", "read vectors")
    _timed(meaning.Meaning, "nearest", "meaning (all)")
    _timed(meaning, "best_per_item", "score")
    if vector_cache is not None:
        _timed(vector_cache.Matrix, "of", "build matrix")
        _timed(vector_cache.Matrix, "nearest", "score")


if __name__ == "__main__":
    install()
    from nextcloud_mcp_server.cli import main

    sys.argv = [sys.argv[0], "run"]
    raise SystemExit(main())
