"""A listing's entries are built when first read, in listing order (ADR 0110)."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.nextcloud.dav.files import EntryKey, ListedEntries, listing_row

ROOT = "/remote.php/dav/files/alice"


def _key(path: str, *, folder: bool = False, size: str | None = "1") -> EntryKey:
    modified = "Mon, 23 Nov 2026 18:04:30 GMT"
    return (
        f"{ROOT}/{path}",
        folder,
        size,
        None,
        modified,
        f'"{path}"',
        None if folder else "text/plain",
        None,
    )


def _listed(paths: list[str], folders: frozenset[str] = frozenset()) -> ListedEntries:
    rows = [listing_row(_key(p, folder=p in folders), p, i) for i, p in enumerate(paths)]
    rows.sort()
    return ListedEntries(rows)


def test_entries_sort_folders_first_then_by_name_and_only_a_read_page_is_built() -> None:
    listed = _listed(
        [f"Big/f{i:04}.txt" for i in range(1000)] + ["Big/Zeta", "Big/alpha"], frozenset({"Big/Zeta"})
    )
    assert len(listed) == 1002
    assert [e.name for e in listed[:3]] == ["Zeta", "alpha", "f0000.txt"]
    assert (listed[0].kind, listed[1].kind) == ("directory", "file")
    assert len(listed.built()) == 3  # the other 999 are rows, not entries
    assert listed[-1].name == "f0999.txt"
    assert listed[2] is listed[2]  # built once
    assert len(listed.built()) == 4
    with pytest.raises(IndexError):
        listed[1002]
    assert [e.name for e in listed[1000:]] == ["f0998.txt", "f0999.txt"]


def test_an_entry_sent_as_before_is_the_entry_built_then() -> None:
    before = _listed(["D/a.txt", "D/b.txt"])
    a, b = before[0], before[1]
    rows = [listing_row(_key("D/a.txt"), "D/a.txt", 0), listing_row(_key("D/b.txt", size="2"), "D/b.txt", 1)]
    after = ListedEntries(sorted(rows), before.built())
    assert after[0] is a  # the same answer for a.txt: the same entry
    assert after[1] is not b
    assert (after[1].size, b.size) == (2, 1)


def test_a_name_sent_twice_sorts_without_comparing_the_answers() -> None:
    """A server that sends one name twice, once with a size and once without, must not make the
    sort compare `None` with text (a TypeError): the place in the answer decides first."""
    rows = [listing_row(_key("D/x.txt", size=None), "D/x.txt", 0), listing_row(_key("D/x.txt"), "D/x.txt", 1)]
    listed = ListedEntries(sorted(rows))
    assert [(e.name, e.size) for e in listed] == [("x.txt", None), ("x.txt", 1)]
