"""Text folded for matching: case and accents set aside ("Café" matches "cafe"), for the searches
this server ranks itself (notes, Collectives pages).

Folding decomposes (NFKD), and one character may become many: U+FDFA is 18. Folded whole, an
8 MB note of it held the event loop for 5.7 s and 3.7 GB of memory, one string object per
character. So the text is folded in slices (decomposing and dropping combining marks is the same
slice by slice), marks are dropped by `str.translate` at C speed, and folding stops at `limit`
characters of output: what lies beyond is not matched.
"""

from __future__ import annotations

import functools
import unicodedata

__all__ = ["FOLD_CHARS", "fold"]

FOLD_CHARS = 256_000  # characters of folded text matched, per note or page
_SLICE = 8_192
_LAST_COMBINING = 0x20000  # every code point with a combining class lies below (Unicode 15: U+1E94A)


@functools.cache
def _combining() -> dict[int, None]:
    return {cp: None for cp in range(_LAST_COMBINING) if unicodedata.combining(chr(cp))}


def fold(text: str, limit: int = FOLD_CHARS) -> str:
    """Case- and accent-insensitive form of `text` for matching, at most `limit` characters."""
    table, parts, size = _combining(), [], 0
    for start in range(0, len(text), _SLICE):
        part = unicodedata.normalize("NFKD", text[start : start + _SLICE].casefold()).translate(table)
        parts.append(part)
        size += len(part)
        if size >= limit:
            break
    return "".join(parts)[:limit]
