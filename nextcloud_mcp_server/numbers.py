"""Numbers read from what another party wrote: a header, an answer of Nextcloud, an app or an IdP,
a URI, a model's argument, a prompt's field (docs/ADR/0114).

`str.isdigit()` is no test for what `int()` reads: it takes `²` and `①`, which `int()` refuses
with a `ValueError`, and Arabic-Indic or full-width digits, which `int()` reads as their ASCII
twins; and `int()` refuses a string of more than 4,300 digits. A check of `isdigit()` before
`int()` therefore turned a hostile value into a crash, or into a number its text did not show.
Every such number is read here instead: ASCII digits 0-9 only, a bounded count of them, at most
one leading minus where a caller allows it; anything else is None, for the caller to refuse or
to skip.

A number in JSON (an IdP's `exp` or `expires_in`) has its own traps: Python's parser reads
`NaN` and `Infinity`, which every comparison of a time lets through or `int()` refuses, and
an integer of hundreds of digits, which `float()` refuses; `True` is an `int`. `json_number`
takes a finite int or float, or ASCII digits in a string (as some IdPs send `expires_in`).
"""

from __future__ import annotations

import math

__all__ = ["MAX_DIGITS", "ascii_digits", "ascii_number", "json_number", "json_whole", "lifetime"]

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


def json_number(value: object) -> float | None:
    """A finite number from JSON another party sent: an int or float (not a bool), or a string
    of ASCII digits; None for anything else (NaN, infinities, a number past a float's range)."""
    if isinstance(value, str):
        value = ascii_number(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def json_whole(value: object) -> int | None:
    """A whole number from JSON another party sent: an int (not a bool), or a string of ASCII
    digits with at most one leading minus; None for anything else (a float, a word, a list)."""
    if isinstance(value, str):
        return ascii_number(value, signed=True)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def lifetime(value: object, default: float) -> float:
    """The seconds a token endpoint's `expires_in` says a token lasts: `default` when it is absent
    or no finite number (NaN and Infinity made the refresh's `int()` raise), 0 if negative."""
    seconds = json_number(value)
    return default if seconds is None else max(seconds, 0.0)
