"""Paths are untrusted input: normalised, encoded, and refused when they could escape."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nextcloud_mcp_server.nextcloud import paths

ROOT = "/remote.php/dav/files/alice"


@pytest.mark.parametrize(
    "bad",
    [
        "../etc/passwd",
        "a/../../b",
        "a/./b",
        "%2e%2e/secret",
        "a/%2E%2e/b",
        "a/%2fb",
        "https://evil.example/x",
        "file:///etc/passwd",
        "//evil.example/share",
        "nul\x00byte",
        "tab\there",
        "back\\slash",
        "x" * 251,
        # what Nextcloud trims to nothing or to a dot segment (400 on the real server)
        " ",
        "a/ /b",
        "%20",
        "a/ ../b",
        ". ",
        "a/%20./b",
    ],
)
def test_escapes_and_refused_characters_are_rejected(bad: str) -> None:
    with pytest.raises(paths.InvalidPath):
        paths.clean(bad)


def test_names_with_spaces_around_them_are_kept() -> None:
    """The real Nextcloud accepts these (201): only a name that trims to nothing is refused."""
    assert paths.clean(" a/b /\u00a0/\u3000") == " a/b /\u00a0/\u3000"


def test_paths_are_normalised() -> None:
    assert paths.clean("/Documents//report.pdf/") == "Documents/report.pdf"
    assert paths.clean("/") == ""
    assert paths.clean("cafe\u0301") == "caf\u00e9"  # NFD input becomes NFC, as Nextcloud stores it


def test_special_characters_are_percent_encoded_per_segment() -> None:
    assert paths.encode("My Files/a#b?c%d/été.txt") == "My%20Files/a%23b%3Fc%25d/%C3%A9t%C3%A9.txt"


def test_hrefs_map_back_to_paths_and_foreign_hrefs_are_ignored() -> None:
    assert paths.relative("/remote.php/dav/files/alice/My%20Files/a%23b.txt", ROOT) == "My Files/a#b.txt"
    assert paths.relative("https://cloud.example.com/remote.php/dav/files/alice/", ROOT) == ""
    assert paths.relative("/remote.php/dav/files/alicex/secret", ROOT) is None
    assert paths.relative("/remote.php/dav/files/bob/x", ROOT) is None


segment = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/\\"),
    min_size=1,
    max_size=20,
)


@given(st.lists(segment, min_size=1, max_size=4))
def test_any_accepted_path_round_trips_through_encode_and_href(segments: list[str]) -> None:
    """Whatever clean() accepts comes back unchanged from an href built from its encoding."""
    try:
        cleaned = paths.clean("/".join(segments))
    except paths.InvalidPath:
        return
    assert ".." not in cleaned.split("/")
    href = f"{ROOT}/{paths.encode(cleaned)}"
    assert paths.relative(href, ROOT) == cleaned


_PIECES = ["a", "é", " ", "/", "%", "%0A", "%0a", "%2F", "%C3", "%A9", "\n", "?", "#", "\u0301", "."]
_HREF_PART = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)


@given(st.lists(st.one_of(st.builds(lambda tail: f"{ROOT}/{tail}", _HREF_PART), _HREF_PART), max_size=6))
def test_hrefs_decoded_together_map_as_each_alone(hrefs: list[str]) -> None:
    """`relatives` (one decode of all hrefs) gives what `relative` gives for each: newlines, raw or
    encoded, broken UTF-8, combining marks, queries and foreign hrefs included."""
    assert paths.relatives(hrefs, ROOT) == [paths.relative(href, ROOT) for href in hrefs]


def test_hrefs_decoded_together_keep_their_order_and_roots() -> None:
    hrefs = [f"{ROOT}/", f"{ROOT}/a%20b/c%C3%A9.md", "/remote.php/dav/files/bob/x", f"{ROOT}/e%CC%81"]
    assert paths.relatives(hrefs, ROOT) == ["", "a b/cé.md", None, "\u00e9"]


@pytest.mark.parametrize(
    ("named", "kept"),
    [
        ("Collectives/C/a%2Fb.md", "Collectives/C/a%2Fb.md"),
        ("C/\u202eevil.md", "C/\u202eevil.md"),
        ("/x/y/", "x/y"),
    ],
)
def test_a_path_the_server_named_is_kept_as_it_is(named: str, kept: str) -> None:
    assert paths.named(named) == kept
    assert paths.encode(paths.named(named)).count("/") == kept.count("/")  # %2F stays in its name


@pytest.mark.parametrize("named", ["a/../b", "a/./b", "a//b", "a/ /b", "a\x00b", "a\\b", ""])
def test_a_path_the_server_named_that_leaves_or_names_nothing_is_refused(named: str) -> None:
    with pytest.raises(paths.InvalidPath):
        paths.named(named)
