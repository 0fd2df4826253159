"""The one rule for "what the human saw" (ADR 0057): a question shows the whole text that will be
published or written, or a faithful, bounded summary that says how much is left out and where;
characters that hide or reorder text are shown by name, never passed on silently; and what the
human approved is bound to a digest of the content read, compared again after the answer.

    shown = shown_text(message)          # what goes into the question
    version = bound_version(etag, row)   # what the approval is bound to (ETag + digest)
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pydantic import BaseModel

from nextcloud_mcp_server.nextcloud.names import HIDDEN, INVISIBLE

__all__ = ["QUOTE_CHARS", "bound_version", "digest", "hidden_characters", "shown_text"]

QUOTE_CHARS = 4_000  # characters of a text quoted whole in a question; longer ones are summarised
_HEAD = 3_000  # of a longer text: its start ...
_TAIL = 600  # ... and its end, with what lies between counted
_BLANK_RUN = re.compile(r"(?:[ \t]*\n){4,}")


def _hidden(match: re.Match[str]) -> str:
    return f"⟦U+{ord(match.group()):04X}⟧"


def hidden_characters(text: str) -> int:
    """How many characters of `text` hide or reorder what is drawn."""
    return len(HIDDEN.findall(text)) + len(INVISIBLE.findall(text))


def _visible(text: str) -> str:
    """Hidden characters shown as ⟦U+202E⟧; four or more line breaks in a row as one line saying
    how many (so nothing can be pushed out of sight below blank lines)."""
    text = INVISIBLE.sub(_hidden, HIDDEN.sub(_hidden, text))
    return _BLANK_RUN.sub(lambda m: f"\n⟦{m.group().count(chr(10)) - 1} empty lines⟧\n", text)


def shown_text(text: str, limit: int = QUOTE_CHARS) -> str:
    """`text` as a question shows it: whole (with hidden characters named) when it fits in
    `limit` characters, else its start and end with the middle counted ("characters 3,001 to
    31,400 of 32,000, lines 41 to 380, not shown"), and a line naming hidden characters."""
    count = hidden_characters(text)
    warning = (
        f"\n[It contains {count} invisible or text-direction character(s), shown as ⟦U+…⟧.]" if count else ""
    )
    whole = _visible(text)
    if len(whole) <= limit:
        return f'"{whole}"{warning}'
    head, tail = text[:_HEAD], text[len(text) - _TAIL :]
    first_line, last_line = head.count("\n") + 1, text.count("\n") + 1 - tail.count("\n")
    gap = (
        f"\n⟦… characters {_HEAD + 1:,} to {len(text) - _TAIL:,} of {len(text):,} "
        f"(lines {first_line} to {last_line}) are not shown here …⟧\n"
    )
    return f'"{_visible(head)}{gap}{_visible(tail)}"{warning}'


def digest(*items: Any) -> str:
    """A digest of what was read: models by their JSON, anything else by `json.dumps`/`str`."""
    hasher = hashlib.sha256()
    for item in items:
        if isinstance(item, BaseModel):
            part = item.model_dump_json()
        elif isinstance(item, bytes):
            part = item.hex()
        else:
            try:
                part = json.dumps(item, sort_keys=True, default=str)
            except (TypeError, ValueError):
                part = str(item)
        hasher.update(part.encode())
        hasher.update(b"\x00")
    return hasher.hexdigest()[:32]


def bound_version(label: str, *items: Any) -> str:
    """What an approval is bound to: Nextcloud's own version `label` (an ETag, a row's last
    change) and a digest of everything read, since the label alone can stay the same across a
    change (Deck's and Tables' to the second, a file's ETag across a same-size rewrite)."""
    return f"{label}-{digest(*items)}"
