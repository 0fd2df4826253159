"""Ranking notes against a query, done here rather than by Nextcloud: the Notes app's own search
(its unified search provider) matches bytes case-insensitively only in ASCII ('cafe' does not
find 'Café') and reads every note for every question (ADR 0049)."""

from __future__ import annotations

from collections.abc import Iterable

from nextcloud_mcp_server.nextcloud.folding import fold
from nextcloud_mcp_server.nextcloud.models import Note

__all__ = ["NoteSearchHit", "rank_note", "rank_notes"]


class NoteSearchHit(Note):
    """A note that matched a search, with where it matched and a short excerpt."""

    score: float = 0.0
    matched_in: str = "content"
    snippet: str = ""


def rank_note(
    note: Note, query: str, *, text: str | None = None, folded: str | None = None
) -> NoteSearchHit | None:
    """Score a note against a query, or None when some word of the query is missing. `text` is
    the note's content when the note does not carry it; `folded` that content already folded."""
    words = [w for w in fold(query).split() if w]
    if not words:
        return None
    original = note.content or "" if text is None else text
    title, content = fold(note.title), fold(original) if folded is None else folded
    phrase = " ".join(words)
    if not all(w in title or w in content for w in words):
        return None
    in_title = sum(w in title for w in words)
    score = 0.0
    if phrase in title:
        score += 100
    score += 20 * in_title / len(words)
    if phrase in content:
        score += 5
    score += min(sum(content.count(w) for w in words), 20) / 10
    return NoteSearchHit(
        **note.model_dump(exclude={"content"}),
        score=round(score, 2),
        matched_in="title" if in_title else "content",
        snippet=_snippet(original, words, content),
    )


def rank_notes(notes: Iterable[Note], query: str) -> list[NoteSearchHit]:
    hits = [h for n in notes if (h := rank_note(n, query)) is not None]
    return sorted(hits, key=lambda h: (-h.score, -h.modified, h.id))


def _snippet(content: str, words: list[str], folded: str, width: int = 160) -> str:
    positions = [p for w in words if (p := folded.find(w)) >= 0]
    start = max(0, min(positions) - width // 4) if positions else 0
    excerpt = content[start : start + width].replace("\n", " ").strip()
    return ("…" if start > 0 else "") + excerpt + ("…" if start + width < len(content) else "")
