"""Names people read (file paths, note titles and categories, event and task titles) must look
like what they are: characters that reorder or hide text are refused (ADR 0019).

Refused: the bidirectional controls (U+202A-U+202E embeddings and overrides, U+2066-U+2069
isolates, U+200E/U+200F/U+061C marks), and the invisible U+200B zero-width space, U+2060 word
joiner and U+FEFF. Allowed: U+200C/U+200D (zero-width non-joiner and joiner), which Persian,
Indic scripts and emoji sequences need. Free text (note content, descriptions) is not checked.
"""

from __future__ import annotations

import re

from nextcloud_mcp_server.nextcloud.errors import InvalidInput

__all__ = ["HIDDEN", "INVISIBLE", "check_visible", "named_hidden"]

HIDDEN = re.compile("[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")
# Beyond the names rule: other characters that draw nothing or steer text (controls but tab and
# line feed, soft hyphen, fillers, invisible operators, tag characters), named in text people read
INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u2061-\u2064"
    "\u206a-\u206f\u3164\uffa0\ufff9-\ufffb\U000e0000-\U000e007f]"
)


def _named(match: re.Match[str]) -> str:
    return f"⟦U+{ord(match.group()):04X}⟧"


def named_hidden(text: str) -> str:
    """`text` with every character that hides or reorders text shown by name (`⟦U+202E⟧`): for
    text from elsewhere (mail, activity, notifications) answered to a model or shown to a human."""
    return INVISIBLE.sub(_named, HIDDEN.sub(_named, text))


def check_visible(value: str, what: str) -> None:
    """Raise `InvalidInput` naming the first hidden character in `value`."""
    found = HIDDEN.search(value)
    if found is not None:
        raise InvalidInput(
            f"{what} contains the invisible or text-direction character U+{ord(found.group()):04X}, "
            "which makes a name look different from what it is; remove it"
        )
