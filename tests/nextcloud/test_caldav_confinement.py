"""Which hrefs count as members of a calendar (issue 13, item 2): a hostile server's REPORT answer
naming an href elsewhere is dropped, and a uid only becomes `<uid>.ics` when it is one name."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.nextcloud.dav.caldav import _directly_inside, _plain_uid

CAL = "/remote.php/dav/calendars/admin/personal/"


@pytest.mark.parametrize(
    ("href", "inside"),
    [
        (CAL + "a.ics", True),
        (CAL + "a%40b.ics", True),
        (CAL + "..%2F..%2Ffiles%2Fadmin%2Fx.ics", False),
        (CAL + "sub/a.ics", False),
        (CAL + "..", False),
        (CAL + "%2E%2E", False),
        (CAL, False),
        ("/remote.php/dav/files/admin/evil.ics", False),
        ("/remote.php/dav/calendars/admin/personal-2/a.ics", False),
    ],
)
def test_only_direct_members_are_inside(href: str, inside: bool) -> None:
    assert _directly_inside(CAL, href) is inside


@pytest.mark.parametrize(
    ("uid", "plain"),
    [("3f2c-11", True), ("x@example.com", True), ("a/b", False), ("..", False), ("a?b", False), ("", False)],
)
def test_only_plain_uids_are_tried_as_file_names(uid: str, plain: bool) -> None:
    assert _plain_uid(uid) is plain
