"""ETags come back from Nextcloud weak when nginx compresses the answer (a whole text file, a card
with a photo: seen on the real Nextcloud 29); If-Match with the weak form is refused there, so every
client keeps one plain form and sends it strong."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.nextcloud import etags
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.dav.caldav import CalDAVClient
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
from nextcloud_mcp_server.nextcloud.discovery import Discovered
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from tests import http_mock

BASE = "https://cloud.example.com"
EVENT = f"{BASE}/remote.php/dav/calendars/admin/personal/a.ics"
FILE = f"{BASE}/remote.php/dav/files/admin/a.txt"


@pytest.mark.parametrize("sent", ['W/"abc"', '"abc"', "abc", ' W/"abc" '])
def test_every_form_of_an_etag_becomes_one_plain_and_one_strong_form(sent: str) -> None:
    """Weak, quoted and bare ETags all compare equal and are sent back strong."""
    assert (etags.plain(sent), etags.quoted(sent)) == ("abc", '"abc"')


@pytest.mark.parametrize("given", ["abc", '"abc"', 'W/"abc"', ' "abc" '])
def test_one_etag_given_from_outside_is_taken_in_any_spelling(given: str) -> None:
    """What a model copies from a listing, quoted or weak, names the same version."""
    assert etags.checked(given) == "abc"


@pytest.mark.parametrize(
    "given",
    [
        "",
        '""',
        "W/",
        'W/""',
        'x", "abc',
        'abc", "x',
        "abc,x",
        "a b",
        "abc\r\nX-A: 1",
        "abc\x00",
        "äbc",
        "a" * 201,
    ],
)
def test_an_etag_that_is_empty_a_list_or_not_one_tag_is_refused_and_never_quoted(given: str) -> None:
    """An empty If-Match is no condition at all and a list matches any of its entries, so neither
    may come from outside, nor ever be sent."""
    with pytest.raises(InvalidInput, match="one ETag"):
        etags.checked(given)
    with pytest.raises(InvalidInput):
        etags.quoted(given)


@pytest.fixture
async def http() -> NextcloudHTTP:
    client = NextcloudHTTP(BASE, max_retries=0)
    yield client  # type: ignore[misc]
    await client.aclose()


@http_mock.mock
async def test_a_calendar_object_read_with_a_weak_etag_is_updated_with_the_strong_one(
    http: NextcloudHTTP,
) -> None:
    """GET answers `W/"abc"`; the object's etag is `abc` and the update's If-Match is `"abc"`."""
    http_mock.get(EVENT).respond(
        200, text="BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", headers={"ETag": 'W/"abc"'}
    )
    put = http_mock.put(EVENT).respond(204, headers={"ETag": '"def"'})
    caldav = CalDAVClient(http, BasicCredential("admin", "pw"), Discovered())
    got = await caldav.get("/remote.php/dav/calendars/admin/personal/a.ics")
    assert got.etag == "abc"
    assert await caldav.put(got.href, got.ics, etag=got.etag) == "def"
    assert put.calls.last.request.headers["If-Match"] == '"abc"'


@http_mock.mock
async def test_a_file_read_with_a_weak_etag_reports_the_plain_one(http: NextcloudHTTP) -> None:
    """A whole-file answer compressed by nginx carries `W/"abc"`; the page's etag is `abc`, which a
    later write sends strong."""
    http_mock.get(FILE).respond(
        200, content=b"hello", headers={"ETag": 'W/"abc"', "Content-Type": "text/plain"}
    )
    put = http_mock.put(FILE).respond(204, headers={"ETag": '"def"'})
    files = WebDAVClient(http, BasicCredential("admin", "pw"), "admin")
    page = await files.read("a.txt", offset=0, length=5)
    assert page.etag == "abc"
    await files.write("a.txt", b"bye", if_match='W/"abc"')
    assert put.calls.last.request.headers["If-Match"] == '"abc"'
