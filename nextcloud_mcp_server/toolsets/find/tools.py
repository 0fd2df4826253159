"""Find toolset: notes and files found by the words in them, from the caller's own index
(docs/ADR/0071, 0072, 0089). A call answers from the index at once when the background keeps it
current and its last round is recent; otherwise it first reads what changed in Nextcloud, every
source at once, within FIND_SYNC_SECONDS. Every hit is confirmed with the caller's credential
before it is shown."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import require_scopes
from nextcloud_mcp_server.index.confirm import confirmed
from nextcloud_mcp_server.index.engine import (
    END_MARK,
    MAX_LIMIT,
    START_MARK,
    EmbeddingError,
    Filters,
    FindIndex,
    Hit,
    collection_of,
)
from nextcloud_mcp_server.index.fusion import hybrid
from nextcloud_mcp_server.index.query import MAX_QUERY_CHARS, Query, QueryError, parse_query
from nextcloud_mcp_server.index.sync import Round
from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.resources._uris import contact_uri, file_uri, note_uri
from nextcloud_mcp_server.tools._context import nextcloud_for, runtime_of
from nextcloud_mcp_server.tools._find_index import own_round, user_key
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.find import DECLARATION
from nextcloud_mcp_server.toolsets.find.tools_consent import (
    consent_to_index,
    forget_consent,
    nextcloud_search,
)

if TYPE_CHECKING:  # numpy and the model only once meaning is asked (start-up cost)
    from nextcloud_mcp_server.index.meaning import Meaning

__all__ = ["toolset"]

toolset = Toolset("find")

Kind = Literal["note", "file", "event", "task", "contact", "card", "page"]
KINDS: tuple[Kind, ...] = ("note", "file", "event", "task", "contact", "card", "page")
Mode = Literal["words", "meaning", "both"]
MAX_DEPTH = 200  # how deep each ranking is read when both are fused


class OpenWith(BaseModel):
    tool: str
    arguments: dict[str, Any]


class FoundItem(BaseModel):
    kind: Kind
    title: str
    where: str = Field(
        description="A file's folder ('' = the root), a note's category, an event's or task's calendar, "
        "a contact's address book, a card's board / list, a page's collective"
    )
    modified: str = Field(description="When it last changed (ISO 8601, UTC)")
    excerpt: str = Field(description="Text around the matches, each match between « and »")
    uri: str = Field(description="The nextcloud:// resource to read it ('' when there is none)")
    open_with: OpenWith = Field(description="The tool and arguments that open it")
    by: Literal["words", "meaning"] = Field(
        default="words", description="meaning: found for what it says, not for the words asked (less certain)"
    )


class IndexState(BaseModel):
    complete: bool = Field(description="False: parts of Nextcloud are not indexed yet; ask again to go on")
    items: dict[str, int] = Field(description="Items indexed per kind")
    synced_at: str | None = Field(
        description="The index holds every change made before this time (ISO 8601, UTC); "
        "what was deleted or unshared since is never shown"
    )
    read_now: int = Field(default=0, description="Items this call (re)indexed")
    synced_now: bool = Field(
        default=True, description="False: answered from the index, kept current in the background"
    )
    by_meaning: int | None = Field(
        default=None, description="Items findable by meaning so far (None: finding by meaning is off)"
    )
    errors: list[str] = Field(default_factory=list)


class FindAnswer(BaseModel):
    hits: list[FoundItem]
    next_cursor: str | None = Field(description="Pass as `cursor` (same query and filters) for more")
    dropped: int = Field(description="Hits Nextcloud no longer shows you, removed from the index")
    index: IndexState
    answered_from: Literal["index", "nextcloud search"] = Field(
        default="index", description="nextcloud search: not indexed (see `note`); files by their names only"
    )
    note: str = Field(default="", description="Why the answer is not from the index")


class Forgotten(BaseModel):
    removed: int = Field(description="Items deleted from your index")


def _iso(timestamp: float | None) -> str | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC).isoformat()


def _opener(hit: Hit) -> tuple[str, OpenWith]:
    """The resource URI (or '') and the tool with arguments that open a hit."""
    if hit.kind == "note":
        return note_uri(int(hit.key)), OpenWith(tool="nc_notes_get_note", arguments={"note_id": int(hit.key)})
    if hit.kind in ("event", "task", "contact"):
        href, _, uid = hit.key.partition("|")
        collection = collection_of(href).rstrip("/").rpartition("/")[2]
        if hit.kind == "contact":
            arguments = {"uid": uid, "address_book": collection}
            return contact_uri(collection, uid), OpenWith(tool="nc_contacts_get_contact", arguments=arguments)
        if hit.kind == "event":
            return "", OpenWith(tool="nc_calendar_get_event", arguments={"calendar": collection, "uid": uid})
        return "", OpenWith(tool="nc_calendar_list_todos", arguments={"calendar": collection})
    if hit.kind == "card":
        board, stack, card = (int(x) for x in hit.key.split("/"))
        ids: dict[str, Any] = {"board_id": board, "stack_id": stack, "card_id": card}
        return "", OpenWith(tool="nc_deck_get_card", arguments=ids)
    if hit.kind == "page":
        collective, page = (int(x) for x in hit.key.split("/"))
        opened: dict[str, Any] = {"collective_id": collective, "page_id": page}
        return "", OpenWith(tool="nc_collectives_get_page", arguments=opened)
    return file_uri(hit.key), OpenWith(tool="nc_webdav_read_file", arguments={"path": hit.key})


_KIND_OF: dict[str, Kind] = {kind: kind for kind in KINDS}


def _found(hit: Hit, worded: set[tuple[str, str]] | None = None) -> FoundItem:
    excerpt = hit.excerpt.replace(START_MARK, "«").replace(END_MARK, "»")
    uri, opener = _opener(hit)
    return FoundItem(
        kind=_KIND_OF.get(hit.kind, "file"),
        title=hit.title,
        where=hit.location,
        modified=_iso(hit.modified) or "",
        excerpt=excerpt,
        uri=uri,
        open_with=opener,
        by="words" if worded is None or (hit.kind, hit.key) in worded else "meaning",
    )


def _cursor_tag(query: str, filters: Filters, mode: Mode = "words") -> str:
    """What a cursor belongs to, the same in every process (no set's iteration order in it)."""
    kinds = sorted(filters.kinds) if filters.kinds is not None else None
    parts: tuple[object, ...] = (query, kinds, filters.folder, filters.changed_after, filters.changed_before)
    if mode != "words":
        parts = (*parts, mode)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


def _timestamp(moment: datetime | None) -> float | None:
    """Seconds since the epoch; a time without a zone is taken as UTC."""
    if moment is None:
        return None
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp()


def _offset(cursor: str | None, tag: str) -> int:
    if cursor is None:
        return 0
    offset, _, found = cursor.partition(".")
    number = ascii_number(offset, max_digits=4)
    if found != tag or number is None:
        raise InvalidInput("this cursor belongs to another query or filters; start without a cursor")
    return number


async def _ranked(
    index: FindIndex,
    meaning: Meaning | None,
    mode: Mode,
    user: str,
    words: Query | None,
    question: str,
    filters: Filters,
    *,
    limit: int,
    offset: int,
) -> tuple[list[Hit], set[tuple[str, str]] | None]:
    """One page of hits: by words, by meaning, or both rankings fused (docs/ADR/0078); and which
    of them have the words (None: all)."""
    if mode == "words" or meaning is None:
        return [] if words is None else await index.search(
            user, words, filters, limit=limit, offset=offset
        ), None
    if mode == "meaning" or words is None:
        return await meaning.nearest(user, question, filters, limit=limit, offset=offset), set()
    depth = min(offset + limit, MAX_DEPTH)

    async def ranked_to_depth(page_at: Callable[[int], Awaitable[list[Hit]]]) -> list[Hit]:
        found: list[Hit] = []
        while len(found) < depth:
            page = await page_at(len(found))
            found += page
            if len(page) < MAX_LIMIT:
                break
        return found[:depth]

    def worded(offset: int) -> Awaitable[list[Hit]]:
        return index.search(user, words, filters, limit=MAX_LIMIT, offset=offset)

    def meant(offset: int) -> Awaitable[list[Hit]]:
        return meaning.nearest(user, question, filters, limit=MAX_LIMIT, offset=offset)

    # at the same time: the question is embedded while the engine searches the words
    by_words, by_meaning = await asyncio.gather(ranked_to_depth(worded), ranked_to_depth(meant))
    ranked, with_words = hybrid(by_words, by_meaning)
    return ranked[offset : offset + limit], with_words


@toolset.tool(title="Find by words or meaning", read_only=True, asks=True)  # consent (ADR 0084)
@require_scopes(DECLARATION.read)
async def nc_find(
    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_QUERY_CHARS,
            description='Words (each matches as a beginning too: boil finds boiler), "a phrase", -excluded',
        ),
    ],
    ctx: Context[Any, Any],
    kinds: Annotated[list[Kind] | None, Field(description="Only these kinds (default: all)")] = None,
    folder: Annotated[
        str | None, Field(max_length=4096, description="Only files in this folder or below")
    ] = None,
    changed_after: Annotated[
        datetime | None, Field(description="Only items changed at or after this time")
    ] = None,
    changed_before: Annotated[
        datetime | None, Field(description="Only items changed before this time")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 10,
    cursor: Annotated[
        str | None, Field(max_length=64, description="next_cursor of the previous answer")
    ] = None,
    mode: Annotated[
        Mode | None,
        Field(
            description="words: as written; meaning: what is meant, even in other words; both "
            "(the default when the server finds by meaning)"
        ),
    ] = None,
) -> FindAnswer:
    """Find anything of the user's by the words in it, case and accents ignored, best first: notes;
    files by name, path and the text of plain-text, Markdown, PDF, Word/Excel/PowerPoint and
    OpenDocument files; events and tasks; contacts; Deck cards; Collectives pages. Each hit has an excerpt
    with the matches marked «like this», where it is, when it changed, and how to open it. The
    index is brought up to date first unless kept so in the background; if `index.complete` is false, parts of
    Nextcloud were not read yet: asking again goes on. By meaning, "the heating repair" finds a
    note titled "Boiler service", and the excerpt is the passage that matched."""
    runtime = runtime_of(ctx)
    meaning = await runtime.find.meaning()
    chosen: Mode = mode or ("both" if meaning is not None else "words")
    if chosen != "words" and meaning is None:
        raise InvalidInput("this server does not find by meaning (FIND_MEANING=off): use mode='words'")
    parsed: Query | None
    try:
        parsed = parse_query(query)
    except QueryError as exc:
        if chosen == "words":
            raise InvalidInput(str(exc)) from None
        parsed = None  # a question of no searchable words is still asked by meaning
    filters = Filters(
        kinds=frozenset(kinds) if kinds else None,
        folder=paths.clean(folder) if folder else None,
        changed_after=_timestamp(changed_after),
        changed_before=_timestamp(changed_before),
    )
    tag = _cursor_tag(query, filters, chosen)
    offset = _offset(cursor, tag)
    nc = await nextcloud_for(ctx)
    user = user_key(ctx, nc)
    index = await runtime.find.index()
    refused = await consent_to_index(ctx, index, user)  # multi-user mode asks once (ADR 0084)
    if refused is not None:
        found = await nextcloud_search(nc, query, limit) if parsed is not None and offset == 0 else []
        note = f"Not indexed: {refused}. Shown instead: files whose names match, from Nextcloud's own search."
        return FindAnswer(
            hits=[FoundItem.model_validate(hit) for hit in found],
            next_cursor=None,
            dropped=0,
            index=IndexState(complete=False, items={}, synced_at=None),
            answered_from="nextcloud search",
            note=note,
        )
    settings = runtime.settings
    wanted: set[str] = set(kinds or KINDS)
    own = await own_round(runtime, index, user, nc, wanted)  # None: fresh, kept in the background
    work = own or Round(deadline=time.monotonic() + settings.find_sync_seconds)
    if work.read or work.removed:
        runtime.find.changed(user)
    by_meaning: int | None = None
    settled = meaning.settled(user) if meaning is not None else None
    if meaning is not None and settled is not None:
        by_meaning = settled.embedded  # nothing left to embed: no look at the index for it
    elif meaning is not None:
        try:
            # what is left of the call's budget; the rest goes on in the background
            await meaning.catch_up(user, seconds=max(0.5, work.deadline - time.monotonic()))
        except EmbeddingError as exc:
            if chosen != "words":
                raise InvalidInput(f"finding by meaning failed: {exc}") from None
            work.errors.append(f"meaning: {exc}")
        by_meaning = (await meaning.progress(user)).embedded
        runtime.find.continue_in_background(user)
    hits, worded = await _ranked(
        index, meaning, chosen, user, parsed, query, filters, limit=limit, offset=offset
    )
    kept, dropped = await confirmed(index, user, hits, nc)
    if dropped:
        runtime.find.changed(user)
    status = await index.status(user)
    more = len(hits) == limit
    return FindAnswer(
        hits=[_found(h, worded) for h in kept],
        next_cursor=f"{offset + limit - dropped}.{tag}" if more else None,
        dropped=dropped,
        index=IndexState(
            complete=work.complete,
            items=status.items,
            synced_at=_iso(status.synced_at),
            read_now=work.read,
            synced_now=own is not None,
            errors=work.errors[:20],
            by_meaning=by_meaning,
        ),
    )


@toolset.tool(title="Find index status", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_find_status(ctx: Context[Any, Any]) -> IndexState:
    """How much of the user's Nextcloud the find index holds, when it last read Nextcloud, whether
    that read was complete, and what it could not read. Reads nothing from Nextcloud's content."""
    runtime = runtime_of(ctx)
    nc = await nextcloud_for(ctx)
    status = await (await runtime.find.index()).status(user_key(ctx, nc))
    errors = [e for e in status.error.split("; ") if e]
    return IndexState(
        complete=status.complete, items=status.items, synced_at=_iso(status.synced_at), errors=errors
    )


@toolset.tool(title="Forget the find index", idempotent=True)
@require_scopes(DECLARATION.write)
async def nc_find_forget(ctx: Context[Any, Any]) -> Forgotten:
    """Delete everything this server keeps to find the user's notes and files (the words of their
    text, names, paths), and their answer to indexing. Nothing in Nextcloud changes; the next
    nc_find asks again (where it asks) and builds the index again."""
    runtime = runtime_of(ctx)
    nc = await nextcloud_for(ctx)
    user = user_key(ctx, nc)
    await forget_consent(ctx, await runtime.find.index(), user)  # first: no new round starts
    return Forgotten(removed=await runtime.find.forget(user))
