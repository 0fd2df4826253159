"""Whole numbers read from text another party wrote: a header, an answer of Nextcloud or an app, a
URI, a model's argument, a prompt's field (docs/ADR/0114).

`str.isdigit()` is no test for what `int()` reads: it takes `²` and `①`, which `int()` refuses
with a `ValueError`, and Arabic-Indic or full-width digits, which `int()` reads as their ASCII
twins; and `int()` refuses a string of more than 4,300 digits. A check of `isdigit()` before
`int()` therefore turned a hostile value into a crash, or into a number its text did not show.
Every such number is read here instead: ASCII digits 0-9 only, a bounded count of them, at most
one leading minus where a caller allows it; anything else is None, for the caller to refuse or
to skip.
"""

from __future__ import annotations

__all__ = ["MAX_DIGITS", "ascii_digits", "ascii_number"]

# 2**64 has 20 digits: no size, id or count Nextcloud or its apps hand out is longer
MAX_DIGITS = 20


def ascii_digits(text: str | None, *, max_digits: int = MAX_DIGITS) -> bool:
    """Whether `text` is 1 to `max_digits` ASCII digits and nothing else."""
    if not text or len(text) > max_digits:
        return False
    return text.isascii() and text.isdigit()


def ascii_number(text: str | None, *, max_digits: int = MAX_DIGITS, signed: bool = False) -> int | None:
    """The number `text` writes in 1 to `max_digits` ASCII digits (after one `-` if `signed`);
    None for anything else: empty, other digits, signs, spaces, underscores, too long."""
    if not text:
        return None
    digits = text[1:] if signed and text[0] == "-" else text
    return int(text) if ascii_digits(digits, max_digits=max_digits) else None
