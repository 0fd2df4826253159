"""An item's text cut into passages for finding by meaning (docs/ADR/0078).

A passage is a heading with the paragraphs under it, up to `TARGET_CHARS`; a longer paragraph is
cut at sentence ends, else at spaces, else anywhere. Each passage carries its start in the text,
so a hit points at the passage and its excerpt is that passage, not the item's first lines. An
item gives at most `MAX_PASSAGES`; what lies beyond is still found by its words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_PASSAGES", "TARGET_CHARS", "Passage", "passages"]

TARGET_CHARS = 800
MAX_PASSAGES = 64

_HEADING = re.compile(r"^#{1,6}\s")
_SENTENCE_END = re.compile(r"(?<=[.!?…。])\s+")


@dataclass(frozen=True)
class Passage:
    seq: int
    start: int  # where it begins in the item's text
    end: int  # where it ends there
    text: str  # what is embedded (the first passage is led by the title)


def _pieces(block: str, start: int) -> list[tuple[int, int, str]]:
    """`block` (longer than TARGET_CHARS) cut into pieces of at most TARGET_CHARS."""
    out: list[tuple[int, int, str]] = []
    at = 0
    while at < len(block):
        end = at + TARGET_CHARS
        if end < len(block):
            window = block[at:end]
            cuts = [m.end() for m in _SENTENCE_END.finditer(window)]
            space = window.rfind(" ")
            if cuts and cuts[-1] > TARGET_CHARS // 3:
                end = at + cuts[-1]
            elif space > TARGET_CHARS // 3:
                end = at + space + 1
        piece = block[at:end].strip()
        if piece:
            out.append((start + at, start + min(end, len(block)), piece))
        at = end
    return out


def _blocks(text: str) -> list[tuple[int, str]]:
    """Paragraphs (runs of non-blank lines) with their offsets; a heading line starts a new one."""
    blocks: list[list[int | str]] = []
    current: list[int | str] | None = None
    offset = 0
    for line in text.split("\n"):
        if not line.strip():
            current = None
        elif current is None or _HEADING.match(line):
            current = [offset, line]
            blocks.append(current)
        else:
            current[1] = f"{current[1]}\n{line}"
        offset += len(line) + 1
    return [(int(o), str(b)) for o, b in blocks]


def passages(title: str, text: str) -> list[Passage]:
    """The passages of an item; the title leads the first one (a short note is one passage)."""
    merged: list[tuple[int, int, str]] = []
    for start, block in _blocks(text):
        end = start + len(block)
        if merged and not _HEADING.match(block) and len(merged[-1][2]) + len(block) + 2 <= TARGET_CHARS:
            merged[-1] = (merged[-1][0], end, merged[-1][2] + "\n\n" + block)
        else:
            merged.append((start, end, block))
    cut: list[tuple[int, int, str]] = []
    for start, end, block in merged:
        cut.extend(_pieces(block, start) if len(block) > TARGET_CHARS else [(start, end, block.strip())])
    found = [Passage(seq, start, end, body) for seq, (start, end, body) in enumerate(cut[:MAX_PASSAGES])]
    if title.strip():
        if not found:
            return [Passage(0, 0, 0, title.strip())]
        first = found[0]
        found[0] = Passage(0, first.start, first.end, title.strip() + "\n" + first.text)
    return found
