"""The content lines of a vCard, split and joined in linear time (RFC 6350 §3.2).

vobject's own unfolding copies the growing line for every continuation (20 s for a card with a
5 MB photo) and its folding writes one character at a time (3.6 s); Nextcloud accepts cards up to
5 MiB (`card_size_limit`), so lines are unfolded and folded here, and vobject parses only the
few short lines that are shown.
"""

from __future__ import annotations

import re

__all__ = ["BINARY", "fold", "join", "name_of", "unfold"]

BINARY = frozenset({"PHOTO", "LOGO", "SOUND", "KEY"})
WIDTH = 75  # octets per physical line, without the line break
_BREAK = re.compile(r"\r\n|\n|\r")
_CONTINUATION = re.compile(r"(?:\r\n|\n|\r)[ \t]")
_NAME = re.compile(r"(?:[A-Za-z0-9-]+\.)?([A-Za-z0-9-]+)(?=[;:])")


def unfold(text: str) -> list[str]:
    """The logical lines: a line break followed by one space or tab continues the line."""
    return [line for line in _BREAK.split(_CONTINUATION.sub("", text.removeprefix("\ufeff"))) if line]


def name_of(line: str) -> str:
    """The property name of a content line, upper case, without its group (`item1.EMAIL` is
    `EMAIL`); '' for a line that is not a property."""
    found = _NAME.match(line)
    return found.group(1).upper() if found else ""


def fold(line: str) -> str:
    """One logical line as physical lines of at most 75 octets, never splitting a character."""
    data = line.encode()
    if len(data) <= WIDTH:
        return line + "\r\n"
    parts, start, width = [], 0, WIDTH
    while start < len(data):
        end = min(start + width, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:  # inside a UTF-8 sequence
            end -= 1
        parts.append(data[start:end])
        start, width = end, WIDTH - 1  # continuation lines start with a space
    return b"\r\n ".join(parts).decode() + "\r\n"


def join(lines: list[str]) -> str:
    return "".join(fold(line) for line in lines)
