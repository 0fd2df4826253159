"""vCards from other apps are read without crashing, and updates touch only what was asked."""

from __future__ import annotations

import base64
import time

import pytest

from nextcloud_mcp_server.nextcloud.dav import vcard
from nextcloud_mcp_server.nextcloud.errors import InvalidInput

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
V4 = (
    "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:k\r\nFN:山田 健二\r\nN:山田;健二;;;\r\n"
    "item1.EMAIL;TYPE=INTERNET:kenji@example.jp\r\nitem1.X-ABLabel:home\r\n"
    f"PHOTO:data:image/png;base64,{PNG}\r\nX-FOO;BAR=1:baz\r\nEND:VCARD\r\n"
)


def _unfolded(text: str) -> list[str]:
    return text.replace("\r\n ", "").splitlines()


def test_an_update_keeps_every_other_line_of_a_4_0_card_exactly() -> None:
    """Photo data URI, Apple item groups and unknown properties survive; the changed ones change."""
    out = vcard.patch(V4, vcard.ContactChanges(phones=[vcard.LabeledValue("+81 3 5555 0199", ["cell"])]))
    lines = _unfolded(out)
    for kept in _unfolded(V4)[:-1]:
        assert kept in lines
    assert "TEL;TYPE=CELL:+81 3 5555 0199" in lines
    assert lines[-1] == "END:VCARD"
    assert vcard.read(out).phones == [vcard.LabeledValue("+81 3 5555 0199", ["cell"])]


def test_names_and_values_in_any_script_are_escaped_by_the_library() -> None:
    """Commas, semicolons and newlines in values come back as typed."""
    text = vcard.build(
        "u-1",
        vcard.ContactChanges(full_name="Zoë O'Neil, Jr.", note="line 1\nline 2; part", groups=["Família"]),
    )
    view = vcard.read(text)
    assert (view.full_name, view.note, view.groups) == (
        "Zoë O'Neil, Jr.",
        "line 1\nline 2; part",
        ["Família"],
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("BEGIN:VCARD\nVERSION:3.0\nUID:1\nUID:2\nFN:A\nFN:B\nN:x\nEND:VCARD\n", "2 FN properties"),
        ("BEGIN:VCARD\nVERSION:3.0\nFN:A\nPHOTO;ENCODING=b:!!!notbase64\nEND:VCARD\n", "does not decode"),
        ("garbage", "does not parse"),
        ("BEGIN:VCARD\nVERSION:3.0\nFN:A\nthis line is broken\nEND:VCARD\n", None),
    ],
)
def test_duplicated_and_malformed_cards_are_read_without_crashing(text: str, problem: str | None) -> None:
    view = vcard.read(text, fallback_uid="file-name")
    assert view.full_name
    if problem:
        assert any(problem in p for p in view.problems), view.problems
    assert view.has_photo == ("PHOTO" in text)


def test_a_huge_card_is_not_parsed() -> None:
    huge = "BEGIN:VCARD\nVERSION:3.0\nFN:A\nNOTE:" + "x" * vcard.MAX_CARD_BYTES + "\nEND:VCARD\n"
    assert vcard.read(huge, fallback_uid="big").problems == ["too large"]


def test_refused_input_and_unreadable_cards_change_nothing() -> None:
    with pytest.raises(InvalidInput):
        vcard.patch(V4, vcard.ContactChanges(full_name=""))
    with pytest.raises(InvalidInput):
        vcard.patch("garbage", vcard.ContactChanges(title="x"))
    with pytest.raises(InvalidInput):
        vcard.build("u", vcard.ContactChanges(full_name="A", note="x" * (vcard.MAX_VALUE + 1)))


@pytest.mark.parametrize(
    ("full_name", "split"),
    [
        ("Bob Kiwi", ("Bob", "Kiwi")),
        ("Anna Maria Schmidt", ("Anna Maria", "Schmidt")),
        ("Ludwig van Beethoven", ("Ludwig", "van Beethoven")),
        ("Maria de la Cruz", ("Maria", "de la Cruz")),
        ("Van Morrison", ("Van", "Morrison")),
        ("Cher", ("Cher", "")),
    ],
)
def test_a_full_name_alone_is_split_as_address_books_do(full_name: str, split: tuple[str, str]) -> None:
    assert vcard.split_name(full_name) == split
    view = vcard.read(vcard.build("u", vcard.ContactChanges(full_name=full_name)))
    assert (view.given_name, view.family_name) == split


def test_changing_one_part_of_a_name_keeps_the_others() -> None:
    """Additional names, prefix and suffix are not the tool's to drop."""
    card = (
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:k\r\nFN:Dr. Kim Jae Lee\r\nN:Lee;Kim;Jae;Dr.;PhD\r\nEND:VCARD\r\n"
    )
    out = vcard.patch(card, vcard.ContactChanges(family_name="Park"))
    assert "N:Park;Kim;Jae;Dr.;PhD" in _unfolded(out)


@pytest.mark.parametrize(
    "changes",
    [
        vcard.ContactChanges(phones=[vcard.LabeledValue("1", ["CELL\nEMAIL:attacker@example.org"])]),
        vcard.ContactChanges(phones=[vcard.LabeledValue("1", ['CELL"'])]),
        vcard.ContactChanges(emails=[vcard.LabeledValue("a@example.org\r\nEMAIL:attacker@example.org")]),
        vcard.ContactChanges(organisation="Acme\u0085Inc"),
        vcard.ContactChanges(note="one\rtwo"),
    ],
)
def test_control_characters_and_odd_types_are_refused_on_build_and_patch(
    changes: vcard.ContactChanges,
) -> None:
    """Nothing a caller gives can end a content line or a parameter: refused, never written."""
    with pytest.raises(InvalidInput):
        vcard.patch(V4, changes)
    with pytest.raises(InvalidInput):
        vcard.build("u", vcard.ContactChanges(**{**vars(changes), "full_name": "Eve"}))


def test_a_card_as_large_as_nextcloud_accepts_is_read_and_updated_whole() -> None:
    """5 MiB (Nextcloud's default card_size_limit) of folded photo: read, and changed keeping
    the photo and the given name."""
    photo = base64.b64encode(bytes(range(256)) * (15 * 1024)).decode()
    folded = "\r\n ".join(photo[i : i + 74] for i in range(0, len(photo), 74))
    card = (
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:b\r\nFN:Kim Lee\r\nN:Lee;Kim;;;\r\n"
        f"PHOTO;ENCODING=b:{folded}\r\nEND:VCARD\r\n"
    )
    assert len(card.encode()) > 5 * 1024 * 1024
    view = vcard.read(card)
    assert (view.full_name, view.given_name, view.has_photo, view.problems) == ("Kim Lee", "Kim", True, [])
    out = vcard.patch(card, vcard.ContactChanges(family_name="Park"))
    assert "N:Park;Kim;;;" in _unfolded(out)
    assert f"PHOTO;ENCODING=b:{photo}" in _unfolded(out)


def test_a_card_too_large_to_read_is_not_updated() -> None:
    """Above the reading limit an update is refused, rather than written from a partial view
    (it once dropped the given name)."""
    huge = (
        "BEGIN:VCARD\nVERSION:3.0\nUID:h\nFN:Kim Lee\nN:Lee;Kim;;;\nNOTE:"
        + "x" * vcard.MAX_CARD_BYTES
        + "\nEND:VCARD\n"
    )
    with pytest.raises(InvalidInput, match="Nextcloud Contacts"):
        vcard.patch(huge, vcard.ContactChanges(family_name="Park"))


@pytest.mark.parametrize(
    "line",
    [
        "TEL;TYPE=" + ",".join(f"x-t{n}" for n in range(6000)) + ":+1 555 0100",
        "NOTE;" + ";".join(f"X-P{n}=v" for n in range(6000)) + ":hello",
        "TEL;TYPE=" + ",".join(f"x-t{n}" for n in range(40)),  # no colon at all
    ],
    ids=["6000-types", "6000-parameters", "no-colon"],
)
def test_a_line_with_thousands_of_parameters_is_left_out_at_once(line: str) -> None:
    """Nextcloud stores such a card. Cut inside its parameters, the line made vobject's pattern
    backtrack exponentially: the process, and with it every user's calls, hung for minutes."""
    card = (
        f"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u1\r\nFN:Ann\r\nEMAIL:ann@example.com\r\n{line}\r\nEND:VCARD\r\n"
    )
    started = time.process_time()
    view = vcard.read(card)
    assert time.process_time() - started < 5  # seconds of CPU: exponential before, milliseconds now
    assert (view.full_name, [e.value for e in view.emails]) == ("Ann", ["ann@example.com"])
    assert view.problems == ["a line with too many parameters was left out"]
