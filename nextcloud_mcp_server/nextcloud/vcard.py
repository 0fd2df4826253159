"""vCard 3.0 and 4.0, read and written with `vobject` (never by hand).

`vobject` 0.9.9 is the maintained full vCard/iCalendar parser on PyPI (Radicale uses it too);
the other candidates only validate (`vcard`) or convert from other formats.

- Reading is forgiving: cards from other apps may repeat properties, carry lines that do not
  parse or values of the wrong type; those are skipped or shown as text, and listed in `problems`,
  never a crash. Cards larger than `MAX_CARD_BYTES` are not parsed at all.
- Updating changes only the properties asked for. Every other content line - photos, custom
  `X-` properties, properties this module does not know, Apple's `itemN.` groups - is kept exactly
  as it was: the card is split into its logical lines by vobject's own tokenizer, the lines of the
  changed properties are replaced by lines vobject writes, and the result is parsed again as a
  check. (Re-serializing a whole vCard 4.0 with vobject, a vCard 3.0 library, would mangle 4.0
  values such as `PHOTO:data:image/png;base64,...`.)
"""

from __future__ import annotations

import io
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

import vobject  # type: ignore[import-untyped]
from vobject import base

from nextcloud_mcp_server.nextcloud.errors import InvalidInput

__all__ = [
    "MAX_CARD_BYTES",
    "ContactChanges",
    "ContactView",
    "LabeledValue",
    "build",
    "new_uid",
    "patch",
    "read",
]

MAX_CARD_BYTES = 1024 * 1024
MAX_VALUE = 2000
MAX_ITEMS = 30
# vobject logs the content of lines it skips: personal data, so it stays out of our logs.
logging.getLogger("vobject").setLevel(logging.CRITICAL)
_BINARY = frozenset({"PHOTO", "LOGO", "SOUND", "KEY"})
_KNOWN = ("FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "TITLE", "CATEGORIES", "NOTE", "BDAY", "ADR", "URL")


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
    return [t for t in found if t not in ("internet", "voice", "pref")][:5]


def _parse(text: str) -> tuple[Any, list[str]]:
    """The vCard component, as forgiving as vobject allows (bad lines skipped). When a value does
    not decode (e.g. a PHOTO that is not base64), the card is read again without its binary
    properties and the problem is named."""
    try:
        return vobject.readOne(text, ignoreUnreadable=True), []
    except Exception:  # noqa: S110 - read again below, without the binary properties
        pass
    kept = io.StringIO()
    for line, _ in base.getLogicalLines(io.StringIO(text)):
        try:
            name = base.parseLine(line)[0].upper()
        except base.ParseError:
            continue
        if name not in _BINARY:
            base.foldOneLine(kept, line)
    return vobject.readOne(kept.getvalue(), ignoreUnreadable=True), [
        "a photo, logo, sound or key does not decode"
    ]


def read(text: str, fallback_uid: str = "") -> ContactView:
    """What a card says, whatever state it is in."""
    if len(text.encode()) > MAX_CARD_BYTES:
        return ContactView(uid=fallback_uid, full_name="(card too large to read)", problems=["too large"])
    try:
        card, problems = _parse(text)
        undecodable = bool(problems)
    except Exception as exc:  # vobject raises many kinds; a broken card must not break a listing
        return ContactView(
            uid=fallback_uid, full_name="(unreadable card)", problems=[f"does not parse: {str(exc)[:200]}"]
        )
    contents: dict[str, list[Any]] = {k.upper(): v for k, v in card.contents.items()}

    def first(name: str) -> Any:
        lines = contents.get(name, [])
        if len(lines) > 1 and name in ("FN", "N", "UID", "BDAY"):
            problems.append(f"{len(lines)} {name} properties; the first is shown")
        return lines[0] if lines else None

    view = ContactView(uid=_text(getattr(first("UID"), "value", "")) or fallback_uid, full_name="")
    name = first("N")
    if name is not None and hasattr(name.value, "given"):
        view.given_name = _text(name.value.given)
        view.family_name = _text(name.value.family)
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
    view.has_photo = "PHOTO" in contents or undecodable
    view.version = _text(getattr(first("VERSION"), "value", ""))
    view.problems = problems
    return view


def _check(text: str, what: str) -> str:
    if len(text) > MAX_VALUE or any(ord(c) < 32 and c not in "\n\t" for c in text):
        raise InvalidInput(f"{what} must be at most {MAX_VALUE} printable characters")
    return text


def _fill(card: Any, changes: ContactChanges, current: ContactView | None) -> None:
    """Add the changed properties to an (empty) vobject card."""
    if changes.full_name:
        card.add("fn").value = _check(changes.full_name, "full_name")
    if changes.given_name is not None or changes.family_name is not None:
        given = (
            changes.given_name if changes.given_name is not None else (current.given_name if current else "")
        )
        family = (
            changes.family_name
            if changes.family_name is not None
            else (current.family_name if current else "")
        )
        card.add("n").value = vobject.vcard.Name(
            family=_check(family, "family_name"), given=_check(given, "given_name")
        )
    for name, items in (("email", changes.emails), ("tel", changes.phones)):
        for item in (items or [])[:MAX_ITEMS]:
            line = card.add(name)
            line.value = _check(item.value, name)
            if item.types:
                line.type_param = ",".join(_check(t, "type").upper() for t in item.types[:5])
    if changes.organisation:
        card.add("org").value = [_check(changes.organisation, "organisation")]
    if changes.title:
        card.add("title").value = _check(changes.title, "title")
    if changes.groups:
        card.add("categories").value = [
            _check(g, "group").replace(",", " ") for g in changes.groups[:MAX_ITEMS]
        ]
    if changes.note:
        card.add("note").value = _check(changes.note, "note")
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


def build(uid: str, changes: ContactChanges) -> str:
    """A new vCard 3.0."""
    if not changes.full_name:
        raise InvalidInput("a contact needs a full_name")
    card = vobject.vCard()
    card.add("uid").value = uid
    _fill(card, changes, None)
    if "n" not in card.contents:  # vCard 3.0 requires N
        card.add("n").value = vobject.vcard.Name(family="", given=changes.full_name)
    text: str = card.serialize()
    return text


def patch(text: str, changes: ContactChanges) -> str:
    """The card with only the given properties replaced; every other line kept as it was."""
    if changes.full_name == "":
        raise InvalidInput("a contact's full_name cannot be removed")
    current = read(text)
    if current.problems and current.problems[0].startswith("does not parse"):
        raise InvalidInput("this card cannot be read, so it is not changed; fix it in Nextcloud Contacts")
    changed = _changed_names(changes)
    logical = [line for line, _ in base.getLogicalLines(io.StringIO(text))]
    kept, end = [], None
    for line in logical:
        name = base.parseLine(line)[0].upper()
        if name == "END" and end is None and line.upper().endswith("VCARD"):
            end = line
            break
        if name not in changed:
            kept.append(line)
    temp = vobject.vCard()
    temp.add("fn").value = changes.full_name or current.full_name
    _fill(temp, changes, current)
    added = []
    for line, _ in base.getLogicalLines(io.StringIO(temp.serialize())):
        name = base.parseLine(line)[0].upper()
        if name in changed and name in _KNOWN:
            added.append(line)
    out = io.StringIO()
    for line in [*kept, *added, end or "END:VCARD"]:
        base.foldOneLine(out, line)
    result = out.getvalue()
    read(result)  # parses again; a broken result would have raised in vobject above
    return result
