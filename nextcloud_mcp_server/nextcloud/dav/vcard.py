"""vCard 3.0 and 4.0, read and written with `vobject` (never by hand).

`vobject` 0.9.9 is the maintained full vCard/iCalendar parser on PyPI (Radicale uses it too);
the other candidates only validate (`vcard`) or convert from other formats.

- Reading is forgiving: cards from other apps may repeat properties, carry lines that do not
  parse or values of the wrong type; those are skipped or shown as text, and listed in `problems`,
  never a crash. Only the lines shown go to vobject (photos and other apps' properties never do),
  so a card as large as Nextcloud accepts (5 MiB by default) is read in milliseconds; a card
  above `MAX_CARD_BYTES` is not read, and not updated either.
- Updating changes only the properties asked for. Every other content line - photos, custom
  `X-` properties, properties this module does not know, Apple's `itemN.` groups, the parts of a
  name not given - is kept exactly as it was: the card is split into its logical lines
  (`vcard_lines`), the lines of the changed properties are replaced by lines vobject writes, and
  the result is parsed again as a check. (Re-serializing a whole vCard 4.0 with vobject, a vCard
  3.0 library, would mangle 4.0 values such as `PHOTO:data:image/png;base64,...`.)
- Every value is escaped by vobject; what cannot be escaped is refused: control characters in
  single-line values (the note may have line breaks) and TYPE values other than a plain token
  (`work`, `cell`, `x-mobile`). A written card must hold exactly the properties asked for.
"""

from __future__ import annotations

import binascii
import logging
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from nextcloud_mcp_server.nextcloud.dav.vcard_lines import BINARY, join, name_of, unfold
from nextcloud_mcp_server.nextcloud.errors import InvalidInput

__all__ = [
    "MAX_CARD_BYTES",
    "SHOWN_PROPERTIES",
    "TYPE_PATTERN",
    "ContactChanges",
    "ContactView",
    "LabeledValue",
    "build",
    "new_uid",
    "patch",
    "read",
    "split_name",
]

# Nextcloud refuses cards above its `card_size_limit` (5 MiB unless an administrator raises it);
# this is above that, and the default of NEXTCLOUD_MAX_DAV_ENTRY_BYTES.
MAX_CARD_BYTES = 8 * 1024 * 1024
MAX_VALUE = 2000
MAX_ITEMS = 30
MAX_TYPES = 5
_MAX_SHOWN_LINE = 16 * MAX_VALUE  # longer lines are parsed cut: their values are shown cut anyway
_MAX_HEAD, _MAX_PARAMETERS = 1_000, 20  # a line's name and parameters; what vobject parses fast
_LEFT_OUT = "a line with too many parameters was left out"
TYPE_PATTERN = r"^[A-Za-z0-9-]{1,40}$"  # RFC 6350 TYPE values: iana-token / x-name
_TYPE = re.compile(TYPE_PATTERN)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_BREAKS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# vobject logs the content of lines it skips: personal data, so it stays out of our logs.
logging.getLogger("vobject").setLevel(logging.CRITICAL)
_KNOWN = ("FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "TITLE", "CATEGORIES", "NOTE", "BDAY", "ADR", "URL")
_SHOWN = frozenset({"BEGIN", "END", "VERSION", "UID", *_KNOWN})
# What `read` shows, as names to ask a server for (a search need not fetch photos or other apps' data)
SHOWN_PROPERTIES = ("UID", "VERSION", *_KNOWN)
_PARTICLES = frozenset("al bin da das de del della den der di do dos du el la le ten ter van von zu".split())  # noqa: SIM905


@dataclass(frozen=True)
class LabeledValue:
    value: str
    types: list[str] = field(default_factory=list)


@dataclass
class ContactView:
    uid: str
    full_name: str
    given_name: str = ""
    family_name: str = ""
    nickname: str = ""
    emails: list[LabeledValue] = field(default_factory=list)
    phones: list[LabeledValue] = field(default_factory=list)
    organisation: str = ""
    title: str = ""
    groups: list[str] = field(default_factory=list)
    birthday: str = ""
    note: str = ""
    addresses: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    has_photo: bool = False
    version: str = ""
    problems: list[str] = field(default_factory=list)
    # N's other parts (additional names, prefixes, suffixes) and whether a name part was cut
    other_name_parts: tuple[str, str, str] = ("", "", "")
    name_cut: bool = False


@dataclass
class ContactChanges:
    """None keeps a property; a value replaces it; '' or [] removes it."""

    full_name: str | None = None
    given_name: str | None = None
    family_name: str | None = None
    emails: list[LabeledValue] | None = None
    phones: list[LabeledValue] | None = None
    organisation: str | None = None
    title: str | None = None
    groups: list[str] | None = None
    note: str | None = None
    birthday: str | None = None


def new_uid() -> str:
    return str(uuid.uuid4())


def split_name(full_name: str) -> tuple[str, str]:
    """(given, family) the way address books split a full name: the last word is the family
    name, with the particles before it ('Vincent van Gogh': 'Vincent', 'van Gogh'); one word is
    a given name."""
    words = full_name.split()
    if len(words) < 2:
        return full_name.strip(), ""
    start = len(words) - 1
    for index in range(1, len(words) - 1):
        if words[index] in _PARTICLES:  # lower case only: 'Van' is more likely a given name
            start = index
            break
    return " ".join(words[:start]), " ".join(words[start:])


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return ""
    if isinstance(value, list):
        return "; ".join(_text(v) for v in value if _text(v))
    return str(value).strip()[:MAX_VALUE]


def _types(line: Any) -> list[str]:
    found = []
    for value in line.params.get("TYPE", []):
        found += [t.strip().lower() for t in str(value).split(",") if t.strip()]
    return [t for t in found if t not in ("internet", "voice", "pref")][:MAX_TYPES]


def _undecodable(line: str) -> bool:
    """A base64 photo, logo, sound or key whose data does not decode."""
    head, _, value = line.partition(":")
    if not re.search(r"ENCODING=(?:B|BASE64)\b", head, re.IGNORECASE):
        return False
    try:
        binascii.a2b_base64(value.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        return True
    return False


def _shown_lines(text: str) -> tuple[list[str], bool, list[str]]:
    """The lines vobject needs to show a card (at most `MAX_ITEMS` of each property, each of
    bounded length), whether it has a photo, and what is odd about its binary lines."""
    shown: list[str] = []
    seen: Counter[str] = Counter()
    photo, problems = False, list[str]()
    for line in unfold(text):
        name = name_of(line)
        if name in BINARY:
            photo = photo or name == "PHOTO"
            if not problems and _undecodable(line):
                problems.append("a photo, logo, sound or key does not decode")
        elif name in _SHOWN:
            seen[name] += 1
            if seen[name] <= MAX_ITEMS and (kept := _bounded(line)) is not None:
                shown.append(kept)
            elif seen[name] <= MAX_ITEMS and _LEFT_OUT not in problems:
                problems.append(_LEFT_OUT)
    return shown, photo, problems


def _bounded(line: str) -> str | None:
    """The line as vobject may read it: its value cut, never its name and parameters. vobject's
    line pattern backtracks exponentially on parameters without a colon after them: a TEL line
    with 6,000 TYPE values, cut inside them, held the process (and its event loop) for minutes.
    A line whose parameters are long or many is left out (None)."""
    head, colon, value = line.partition(":")
    if not colon or len(head) > _MAX_HEAD or head.count(";") + head.count(",") > _MAX_PARAMETERS:
        return None
    return f"{head}:{value[:_MAX_SHOWN_LINE]}"


def _unreadable(fallback_uid: str, why: str) -> ContactView:
    return ContactView(uid=fallback_uid, full_name="(unreadable card)", problems=[f"does not parse: {why}"])


def read(text: str, fallback_uid: str = "") -> ContactView:
    """What a card says, whatever state it is in."""
    import vobject  # type: ignore[import-untyped]  # here: only for start-up cost (docs/ADR/0069)

    if len(text.encode()) > MAX_CARD_BYTES:
        return ContactView(uid=fallback_uid, full_name="(card too large to read)", problems=["too large"])
    shown, photo, problems = _shown_lines(text)
    if not shown or shown[0].upper() != "BEGIN:VCARD":
        return _unreadable(fallback_uid, "it is not a vCard")
    try:
        card = vobject.readOne("\r\n".join(shown) + "\r\n", ignoreUnreadable=True)
    except Exception as exc:  # vobject raises many kinds; a broken card must not break a listing
        return _unreadable(fallback_uid, str(exc)[:200])
    contents: dict[str, list[Any]] = {k.upper(): v for k, v in card.contents.items()}

    def first(name: str) -> Any:
        lines = contents.get(name, [])
        if len(lines) > 1 and name in ("FN", "N", "UID", "BDAY"):
            problems.append(f"{len(lines)} {name} properties; the first is shown")
        return lines[0] if lines else None

    view = ContactView(uid=_text(getattr(first("UID"), "value", "")) or fallback_uid, full_name="")
    name = first("N")
    if name is not None and hasattr(name.value, "given"):
        parts = [name.value.given, name.value.family, name.value.additional, name.value.prefix]
        view.given_name, view.family_name, additional, prefix = (_text(p) for p in parts)
        view.other_name_parts = (additional, prefix, _text(name.value.suffix))
        view.name_cut = any(len(_text(p)) >= MAX_VALUE for p in parts)
    fn = first("FN")
    view.full_name = _text(getattr(fn, "value", "")) or f"{view.given_name} {view.family_name}".strip()
    view.full_name = view.full_name or "(no name)"
    view.nickname = _text(getattr(first("NICKNAME"), "value", ""))
    view.emails = [LabeledValue(_text(e.value), _types(e)) for e in contents.get("EMAIL", [])[:MAX_ITEMS]]
    view.phones = [
        LabeledValue(_text(t.value).removeprefix("tel:"), _types(t))
        for t in contents.get("TEL", [])[:MAX_ITEMS]
    ]
    view.organisation = _text(getattr(first("ORG"), "value", ""))
    view.title = _text(getattr(first("TITLE"), "value", ""))
    for line in contents.get("CATEGORIES", []):
        values = line.value if isinstance(line.value, list) else str(line.value).split(",")
        view.groups += [_text(v) for v in values if _text(v) and _text(v) not in view.groups]
    view.birthday = _text(getattr(first("BDAY"), "value", ""))
    view.note = _text(getattr(first("NOTE"), "value", ""))
    view.addresses = [_text(str(a.value).replace("\n", ", ")) for a in contents.get("ADR", [])[:MAX_ITEMS]]
    view.urls = [_text(u.value) for u in contents.get("URL", [])[:MAX_ITEMS]]
    view.has_photo = photo
    view.version = _text(getattr(first("VERSION"), "value", ""))
    view.problems = problems
    return view


def _check(text: str, what: str, *, lines: bool = False) -> str:
    """A value to write: bounded, and without control characters (line breaks and tabs only
    where `lines`, in the note, which vobject escapes)."""
    control = _CONTROL_BUT_BREAKS if lines else _CONTROL
    if len(text) > MAX_VALUE or control.search(text) or (lines and "\r" in text):
        kind = "printable characters" + (" and line breaks" if lines else " on one line")
        raise InvalidInput(f"{what} must be at most {MAX_VALUE} {kind}")
    return text


def _check_type(value: str) -> str:
    if not _TYPE.match(value):
        raise InvalidInput("a type is one word of letters, digits and '-', such as work, home or cell")
    return value.upper()


def _name(changes: ContactChanges, current: ContactView | None) -> Any:
    """N with the given parts changed and the others as they are."""
    import vobject  # here: only for start-up cost (docs/ADR/0069)

    if current is not None and current.name_cut:
        raise InvalidInput("this contact's name is too long to change here; change it in Nextcloud Contacts")
    old = current or ContactView(uid="", full_name="")
    given = changes.given_name if changes.given_name is not None else old.given_name
    family = changes.family_name if changes.family_name is not None else old.family_name
    additional, prefix, suffix = old.other_name_parts
    return vobject.vcard.Name(
        family=_check(family, "family_name"),
        given=_check(given, "given_name"),
        additional=additional,
        prefix=prefix,
        suffix=suffix,
    )


def _fill(card: Any, changes: ContactChanges, current: ContactView | None) -> None:
    """Add the changed properties to an (empty) vobject card."""
    if changes.full_name:
        card.add("fn").value = _check(changes.full_name, "full_name")
    if changes.given_name is not None or changes.family_name is not None:
        card.add("n").value = _name(changes, current)
    for name, items in (("email", changes.emails), ("tel", changes.phones)):
        for item in (items or [])[:MAX_ITEMS]:
            line = card.add(name)
            line.value = _check(item.value, name)
            if item.types:
                line.type_param = ",".join(_check_type(t) for t in item.types[:MAX_TYPES])
    if changes.organisation:
        card.add("org").value = [_check(changes.organisation, "organisation")]
    if changes.title:
        card.add("title").value = _check(changes.title, "title")
    if changes.groups:
        card.add("categories").value = [
            _check(g, "group").replace(",", " ") for g in changes.groups[:MAX_ITEMS]
        ]
    if changes.note:
        card.add("note").value = _check(changes.note, "note", lines=True)
    if changes.birthday:
        card.add("bday").value = _check(changes.birthday, "birthday")


def _changed_names(changes: ContactChanges) -> set[str]:
    names = {
        "FN": changes.full_name,
        "EMAIL": changes.emails,
        "TEL": changes.phones,
        "ORG": changes.organisation,
        "TITLE": changes.title,
        "CATEGORIES": changes.groups,
        "NOTE": changes.note,
        "BDAY": changes.birthday,
    }
    changed = {name for name, value in names.items() if value is not None}
    if changes.given_name is not None or changes.family_name is not None:
        changed.add("N")
    return changed


def _added_lines(changes: ContactChanges, current: ContactView | None) -> list[str]:
    """The content lines of the changed properties, as vobject writes them; refused unless they
    are exactly the properties asked for (a value that escaped its line would add one)."""
    import vobject  # here: only for start-up cost (docs/ADR/0069)

    temp = vobject.vCard()
    if not changes.full_name:
        temp.add("fn").value = "-"  # vobject wants an FN to write a card; this one is not used
    _fill(temp, changes, current)
    changed = _changed_names(changes)
    lines = [line for line in unfold(temp.serialize()) if name_of(line) in changed]
    expected = Counter({"FN": 1} if "FN" in changed else {})
    expected.update({"N": 1} if "N" in changed else {})
    for name, value in (
        ("EMAIL", changes.emails),
        ("TEL", changes.phones),
        ("ORG", changes.organisation),
        ("TITLE", changes.title),
        ("NOTE", changes.note),
        ("BDAY", changes.birthday),
    ):
        if isinstance(value, list):
            expected[name] = min(len(value), MAX_ITEMS)
        elif value:
            expected[name] = 1
    expected["CATEGORIES"] = 1 if changes.groups else 0
    if Counter(name_of(line) for line in lines) != +expected:
        raise InvalidInput("a value would change the card's structure; nothing was changed")
    return lines


def build(uid: str, changes: ContactChanges) -> str:
    """A new vCard 3.0. Without given and family names, the full name is split into them."""
    if not changes.full_name:
        raise InvalidInput("a contact needs a full_name")
    if changes.given_name is None and changes.family_name is None:
        given, family = split_name(changes.full_name)
        changes = ContactChanges(**{**vars(changes), "given_name": given, "family_name": family})
    lines = _added_lines(changes, None)
    return join(["BEGIN:VCARD", "VERSION:3.0", f"UID:{uid}", *lines, "END:VCARD"])


def patch(text: str, changes: ContactChanges) -> str:
    """The card with only the given properties replaced; every other line kept as it was. A card
    that cannot be read whole is not changed."""
    if changes.full_name == "":
        raise InvalidInput("a contact's full_name cannot be removed")
    size = len(text.encode())
    if size > MAX_CARD_BYTES:
        raise InvalidInput(
            f"this contact is {size:,} bytes, more than the {MAX_CARD_BYTES:,} this server reads whole, "
            "so it is not changed here (nothing in it could be kept safely); change it in Nextcloud Contacts"
        )
    current = read(text)
    if current.problems and current.problems[0].startswith("does not parse"):
        raise InvalidInput("this card cannot be read, so it is not changed; fix it in Nextcloud Contacts")
    changed = _changed_names(changes)
    kept, end = [], "END:VCARD"
    for line in unfold(text):
        name = name_of(line)
        if name == "END" and line.upper().endswith("VCARD"):
            end = line
            break
        if name not in changed:
            kept.append(line)
    result = join([*kept, *_added_lines(changes, current), end])
    if read(result).problems[:1] != current.problems[:1]:  # a card that read before reads after
        raise InvalidInput("the changed card would not read back; nothing was changed")
    return result
