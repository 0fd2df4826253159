"""Notes toolset: the Nextcloud Notes app. Tool names match the widely used Nextcloud MCP server,
so prompts written for it keep working."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import NOTES_READ, NOTES_WRITE, require_scopes
from nextcloud_mcp_server.index.engine import END_MARK, START_MARK, Hit
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.errors import PreconditionFailed
from nextcloud_mcp_server.nextcloud.models import Note
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval, shrinks
from nextcloud_mcp_server.tools._context import nextcloud_for, runtime_of
from nextcloud_mcp_server.tools._find_index import ANSWERED_FROM_INDEX, from_index
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.tools._results import answer, stale_version
from nextcloud_mcp_server.tools._versions import approve_update, given_etag
from nextcloud_mcp_server.toolsets.notes.client import (
    InvalidNoteInput,
    NoteConflict,
    NotesClient,
    Progress,
    check_category,
    check_content,
    check_title,
)
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("notes")

NoteId = Annotated[int, Field(ge=1, le=2**63 - 1, description="The note's numeric id, as listed or searched")]
MAX_QUERY = 500  # characters of a search query
ECHO = 80  # characters of the query repeated in the result


class NoteSummary(BaseModel):
    id: int
    title: str
    category: str = Field(description="Folder path below the notes folder; '' when uncategorized")
    favorite: bool
    modified: str = Field(description="Last change, ISO 8601 UTC")


class NoteDetail(NoteSummary):
    content: str
    etag: str = Field(description="Pass this to nc_notes_update_note to update safely")
    readonly: bool = False
    notice: str | None = Field(default=None, description="Set when Nextcloud stored another title")


class NoteList(BaseModel):
    notes: list[NoteSummary]
    total: int = Field(description="How many notes matched before limit/offset")


class NoteHit(NoteSummary):
    matched_in: str = Field(description="'title' or 'content'")
    snippet: str
    score: float


class NoteSearchResult(BaseModel):
    query: str
    hits: list[NoteHit]
    answered_from: str = Field(
        default="nextcloud",
        description="'nextcloud' (the Notes app searched), or 'find index' (your up-to-date find index "
        "answered: words match their beginnings too, every hit confirmed by Nextcloud)",
    )


class DeletedNote(BaseModel):
    id: int
    title: str
    category: str
    deleted: bool = True


def _iso(timestamp: int) -> str:
    # `Note.modified` is bounded to years 1970-9999, where this is datetime's isoformat (in half the time)
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


def _summary(note: Note) -> dict[str, Any]:
    return {
        "id": note.id,
        "title": note.title,
        "category": note.category,
        "favorite": note.favorite,
        "modified": _iso(note.modified),
    }


def _detail(note: Note) -> NoteDetail:
    return NoteDetail(**_summary(note), content=note.content or "", etag=note.etag, readonly=note.readonly)


def _stored(detail: NoteDetail, asked: str | None) -> NoteDetail:
    """Say so when Nextcloud stored a different title than the one asked for."""
    if asked is not None and detail.title != asked:
        detail.notice = (
            f"Nextcloud stored the title as '{detail.title}', not '{asked[:200]}': it drops characters "
            "that cannot be in a file name (such as / and ?) and numbers titles that already exist"
        )
    return detail


def _progress(ctx: Context[Any, Any], what: str) -> Progress:
    """Progress of a read that walks every note, for a client that sent a progress token (the
    SDK sends nothing otherwise)."""

    async def report(done: int, total: int | None) -> None:
        await ctx.report_progress(done, total, f"{done} {what}")

    return report


def _max_bytes(ctx: Context[Any, Any]) -> int:
    return runtime_of(ctx).settings.notes_max_content_bytes


@toolset.tool(title="List notes", read_only=True)
@require_scopes(NOTES_READ)
async def nc_notes_list_notes(
    ctx: Context[Any, Any],
    category: Annotated[
        str | None, Field(description="Only notes in exactly this category, e.g. 'Work/Projects'")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=1000)] = 100,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> NoteList:
    """List notes, newest first: id, title, category, favorite, last change. Content is not
    included; use nc_notes_get_note for it, or nc_notes_search_notes to find notes by words."""
    nc = await nextcloud_for(ctx)
    wanted = check_category(category) if category else None
    notes = await nc.api(NotesClient).newest(category=wanted, progress=_progress(ctx, "notes listed"))
    page = notes[offset : offset + limit]
    return NoteList(notes=[NoteSummary(**_summary(n)) for n in page], total=len(notes))


@toolset.tool(title="Get a note", read_only=True)
@require_scopes(NOTES_READ)
async def nc_notes_get_note(note_id: NoteId, ctx: Context[Any, Any]) -> NoteDetail:
    """Get one note with its full content and its ETag (needed to update it)."""
    nc = await nextcloud_for(ctx)
    return _detail(await nc.api(NotesClient).get(note_id))


@toolset.tool(title="Create a note")
@require_scopes(NOTES_WRITE)
async def nc_notes_create_note(
    title: Annotated[str, Field(description="Title; it also becomes the note's file name")],
    ctx: Context[Any, Any],
    content: Annotated[str, Field(description="Markdown text")] = "",
    category: Annotated[str, Field(description="Folder path such as 'Work/Projects'; '' for none")] = "",
) -> NoteDetail:
    """Create a note. Nextcloud may adjust the title (e.g. add ' (2)' when it already exists);
    the returned note shows the final title."""
    title, category = check_title(title), check_category(category)
    content = check_content(content, _max_bytes(ctx))
    nc = await nextcloud_for(ctx)
    return _stored(
        _detail(await nc.api(NotesClient).create(title=title, content=content, category=category)), title
    )


@toolset.tool(title="Update a note", idempotent=True, view=APPROVAL)
@require_scopes(NOTES_WRITE)
async def nc_notes_update_note(
    note_id: NoteId,
    etag: Annotated[str, Field(description="The etag from nc_notes_get_note; a stale one is refused")],
    ctx: Context[Any, Any],
    title: str | None = None,
    content: Annotated[str | None, Field(description="The new full content (replaces the old)")] = None,
    category: str | None = None,
) -> Annotated[CallToolResult, NoteDetail]:
    """Replace a note's title, content and/or category. Requires the etag from nc_notes_get_note:
    if the note changed since, nothing is overwritten and the current note is returned with
    the error, so you can merge and retry with its new etag. Emptying a note or cutting it to
    less than half asks the user first (and is refused at permission level write)."""
    etag = given_etag(etag)
    if title is None and content is None and category is None:
        raise InvalidNoteInput("give at least one of title, content or category")
    title = check_title(title) if title is not None else None
    content = check_content(content, _max_bytes(ctx)) if content is not None else None
    category = check_category(category) if category is not None else None
    nc = await nextcloud_for(ctx)
    existing = await nc.api(NotesClient).get(note_id)
    target = f'the note "{existing.title}"'
    question = None
    if shrinks(existing.content, content):
        left = f"{len(content or '')} characters" if (content or "").strip() else "nothing"
        size = len(existing.content or "")
        question = f"Replace the content of {target} ({size} characters) with {left}?"
    try:
        version = await approve_update(
            ctx,
            tool="nc_notes_update_note",
            target=target,
            host=nc.api(NotesClient).host,
            given=etag,
            current=existing.etag,
            question=question,
        )
        note = await version.write(
            ctx,
            lambda if_match: nc.api(NotesClient).update(
                note_id, etag=if_match, title=title, content=content, category=category
            ),
        )
    except NoteConflict as conflict:
        return stale_version(conflict, "note", "current_note", _detail(conflict.current))
    except PreconditionFailed as changed:
        return stale_version(changed, "note", "current_note", _detail(existing))
    return answer(_stored(_detail(note), title))


@toolset.tool(title="Append to a note")
@require_scopes(NOTES_WRITE)
async def nc_notes_append_content(
    note_id: NoteId,
    content: Annotated[str, Field(min_length=1, description="Text added at the end, on a new line")],
    ctx: Context[Any, Any],
) -> NoteDetail:
    """Add text to the end of a note without replacing what is there. Safe against concurrent
    edits: if the note changes meanwhile, the append is redone on the new version."""
    limit = _max_bytes(ctx)
    check_content(content, limit)
    nc = await nextcloud_for(ctx)
    return _detail(await nc.api(NotesClient).append(note_id, content, max_bytes=limit))


async def _indexed_result(nc: NextcloudClient, query: str, hits: list[Hit]) -> NoteSearchResult:
    """The find index's hits as a notes search answer (one listing for the notes' summaries)."""
    listed = (
        {str(n.id): n async for n in nc.api(NotesClient).iter_notes(exclude=("content",))} if hits else {}
    )
    found = []
    for rank, hit in enumerate(h for h in hits if h.key in listed):
        snippet = hit.excerpt.replace(START_MARK, "").replace(END_MARK, "")
        in_title = any(word.casefold() in hit.title.casefold() for word in query.split() if word.isalnum())
        found.append(
            NoteHit(
                **_summary(listed[hit.key]),
                matched_in="title" if in_title else "content",
                snippet=snippet,
                score=round(1.0 / (rank + 1), 3),
            )
        )
    echoed = query if len(query) <= ECHO else query[:ECHO] + "…"
    return NoteSearchResult(query=echoed, hits=found, answered_from=ANSWERED_FROM_INDEX)


@toolset.tool(title="Search notes", read_only=True)
@require_scopes(NOTES_READ)
async def nc_notes_search_notes(
    query: Annotated[
        str, Field(min_length=1, max_length=MAX_QUERY, description="Words that must all appear")
    ],
    ctx: Context[Any, Any],
    category: Annotated[str | None, Field(description="Only search this category")] = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
) -> NoteSearchResult:
    """Find notes containing every word of the query (case- and accent-insensitive). Title
    matches rank above content matches; each hit has a short snippet."""
    if not query.strip():
        raise InvalidNoteInput("query must contain a word")
    nc = await nextcloud_for(ctx)
    wanted = check_category(category) if category else None
    indexed = None if wanted else await from_index(ctx, nc, query, {"note"}, limit=limit)
    if indexed is not None:
        return await _indexed_result(nc, query, indexed)
    hits = await nc.api(NotesClient).search(
        query, category=wanted, limit=limit, progress=_progress(ctx, "notes searched")
    )
    return NoteSearchResult(
        query=query if len(query) <= ECHO else query[:ECHO] + "…",
        hits=[
            NoteHit(**_summary(h), matched_in=h.matched_in, snippet=h.snippet, score=h.score) for h in hits
        ],
    )


@toolset.tool(title="Delete a note", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(NOTES_WRITE)
async def nc_notes_delete_note(note_id: NoteId, ctx: Context[Any, Any]) -> DeletedNote:
    """Delete a note. The user is asked to approve first (unless the server is set up not to ask).
    With Nextcloud's trash bin enabled (the default) its file can still be restored from the Files
    app."""
    nc = await nextcloud_for(ctx)
    note = await nc.api(NotesClient).get(note_id)
    place = f' in category "{note.category}"' if note.category else ""
    target = f'the note "{note.title}"'
    when = datetime.fromtimestamp(note.modified, UTC).strftime("%Y-%m-%d %H:%M UTC")
    question = f"Delete {target}{place}, last changed {when}?"
    asked = await require_approval(
        ctx, tool="nc_notes_delete_note", target=target, question=question, version=note.etag
    )
    if asked and (await nc.api(NotesClient).get(note_id)).etag != note.etag:
        await refuse_changed(ctx, tool="nc_notes_delete_note", target=target)
    await nc.api(NotesClient).delete(note_id)
    return DeletedNote(id=note.id, title=note.title, category=note.category)
