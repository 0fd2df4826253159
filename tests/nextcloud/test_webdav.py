"""WebDAV client edge cases with http_mock: ranges, search requests, recorded error bodies."""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.dav.file_search import SearchFilter, search_files
from nextcloud_mcp_server.nextcloud.dav.files import http_date
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
from nextcloud_mcp_server.nextcloud.errors import Conflict, InvalidInput, NotFound, PreconditionFailed
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from tests import http_mock
from tests.recordings import load

BASE = "https://cloud.example.com"
FILES = f"{BASE}/remote.php/dav/files/admin"


@pytest.fixture
async def webdav() -> WebDAVClient:
    http = NextcloudHTTP(BASE, max_retries=0)
    yield WebDAVClient(http, BasicCredential("admin", "pw"), "admin")  # type: ignore[misc]
    await http.aclose()


@http_mock.mock
async def test_a_server_ignoring_range_is_skipped_through_and_cut(webdav: WebDAVClient) -> None:
    """A 200 with the whole body: bytes before the offset are dropped, the page is cut."""
    route = http_mock.get(f"{FILES}/big.bin").mock(
        return_value=http_mock.Response(
            200, content=bytes(range(256)) * 4, headers={"Content-Type": "application/x"}
        )
    )
    page = await webdav.read("big.bin", offset=300, length=10)
    assert page.data == bytes(range(44, 54))
    assert page.total == 1024
    assert route.calls[0].request.headers["Range"] == "bytes=300-309"


@http_mock.mock
async def test_a_range_answer_reports_the_total_size(webdav: WebDAVClient) -> None:
    http_mock.get(f"{FILES}/a.txt").mock(
        return_value=http_mock.Response(
            206,
            content=b"llo",
            headers={"Content-Range": "bytes 2-4/15", "Content-Type": "text/plain; charset=ISO-8859-1"},
        )
    )
    page = await webdav.read("a.txt", offset=2, length=3)
    assert (page.data, page.total, page.mime, page.charset) == (b"llo", 15, "text/plain", "ISO-8859-1")


@http_mock.mock
async def test_reading_past_the_end_is_an_empty_page(webdav: WebDAVClient) -> None:
    http_mock.get(f"{FILES}/a.txt").mock(
        return_value=http_mock.Response(416, headers={"Content-Range": "bytes */15"})
    )
    page = await webdav.read("a.txt", offset=100, length=10)
    assert (page.data, page.total) == (b"", 15)


@http_mock.mock
async def test_recorded_404_names_the_path(webdav: WebDAVClient) -> None:
    http_mock.get(f"{FILES}/mcp-test/nope.txt").mock(
        return_value=http_mock.Response(404, text=load("webdav_get_404").body)
    )
    with pytest.raises(NotFound, match="no file or folder at /mcp-test/nope.txt"):
        await webdav.read("mcp-test/nope.txt", length=10)


@http_mock.mock
async def test_recorded_405_on_mkcol_means_it_already_exists(webdav: WebDAVClient) -> None:
    http_mock.request("MKCOL", f"{FILES}/mcp-test").mock(
        return_value=http_mock.Response(405, text=load("webdav_mkcol_exists_405").body)
    )
    with pytest.raises(Conflict, match="/mcp-test already exists"):
        await webdav.make_directory("mcp-test")


@http_mock.mock
async def test_recorded_412_on_move_says_the_target_exists(webdav: WebDAVClient) -> None:
    route = http_mock.request("MOVE", f"{FILES}/mcp-test/renamed.txt").mock(
        return_value=http_mock.Response(412, text=load("webdav_move_no_overwrite_412").body)
    )
    with pytest.raises(PreconditionFailed, match="target exists: /mcp-test/hello-copy.txt"):
        await webdav.transfer("MOVE", "mcp-test/renamed.txt", "mcp-test/hello-copy.txt", overwrite=False)
    sent = route.calls[0].request.headers
    assert sent["Overwrite"] == "F"
    assert sent["Destination"] == f"{FILES}/mcp-test/hello-copy.txt"


async def test_moving_a_folder_into_itself_or_the_root_is_refused_before_sending(
    webdav: WebDAVClient,
) -> None:
    with pytest.raises(InvalidInput, match="inside it"):
        await webdav.transfer("MOVE", "a", "a/b", overwrite=False)
    with pytest.raises(InvalidInput):
        await webdav.delete("")


@http_mock.mock
async def test_search_sends_a_basicsearch_and_reads_the_recorded_answer(webdav: WebDAVClient) -> None:
    route = http_mock.request("SEARCH", f"{BASE}/remote.php/dav/").mock(
        return_value=http_mock.Response(207, text=load("webdav_search").body)
    )
    since = datetime(2026, 11, 1, tzinfo=UTC)
    found = await search_files(
        webdav, SearchFilter(name_pattern="*.txt", mime_type="text/*", modified_since=since)
    )
    assert sorted(e.path for e in found) == ["mcp-test/hello-copy.txt", "mcp-test/renamed.txt", "welcome.txt"]
    body = route.calls[0].request.content.decode()
    assert "<d:href>/files/admin</d:href><d:depth>infinity</d:depth>" in body
    assert "<d:like><d:prop><d:displayname/></d:prop><d:literal>%.txt</d:literal></d:like>" in body
    assert "<d:like><d:prop><d:getcontenttype/></d:prop><d:literal>text/%</d:literal></d:like>" in body
    assert (
        f"<d:gt><d:prop><d:getlastmodified/></d:prop><d:literal>{int(since.timestamp())}</d:literal>" in body
    )
    assert "<d:nresults>50</d:nresults>" in body
    # Nextcloud sorts and cuts: the newest matches, not any 50 of them
    assert "<d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order>" in body
    # only what a result shows: no file id, no length beside oc:size, nothing computed per entry
    assert "<oc:size/>" in body
    assert "fileid" not in body
    assert "getcontentlength" not in body


async def test_a_search_without_criteria_is_refused(webdav: WebDAVClient) -> None:
    with pytest.raises(InvalidInput, match="at least one of"):
        await search_files(webdav, SearchFilter())


@pytest.mark.parametrize(
    "value",
    [
        "Mon, 23 Nov 2026 18:04:30 GMT",
        "Thu, 01 Jan 1970 00:00:00 GMT",
        "Sat, 29 Feb 2020 23:59:59 GMT",
        "Mon, 23 Nov 2026 18:04:30 +0200",
        "Monday, 23-Nov-26 18:04:30 GMT",
        "Mon, 31 Feb 2026 18:04:30 GMT",
        "Mon, 23 Nov 2026 18:04:60 GMT",
        "Mon, 23 Nov 2026 1:2:3 GMT",
        "Mon, 23 Foo 2026 18:04:30 GMT",
        "Mon, 23 Nov 2026 18:04 GMT",
        "Mon, x Nov 2026 18:04:30 GMT",
        "garbage",
    ],
)
def test_http_dates_read_directly_agree_with_email_utils(value: str) -> None:
    try:
        expected: datetime | None = email.utils.parsedate_to_datetime(value).astimezone(UTC)
    except (TypeError, ValueError):
        expected = None
    assert http_date(value) == expected


def test_a_date_that_leaves_the_calendar_once_in_utc_is_no_date() -> None:
    """9999-12-31 at UTC-14 is in year 10000 in UTC: it raised OverflowError from a folder
    listing, a file's versions, its comments or its tags."""
    assert http_date("Fri, 31 Dec 9999 23:59:59 -1400") is None
    assert http_date("Fri, 31 Dec 9999 23:59:59 +0000") == datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
