"""DAV XML is untrusted: entity bombs and external entities fail cleanly; big bodies stream."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.nextcloud.dav.files import entry_key, entry_of
from nextcloud_mcp_server.nextcloud.dav.xml import MultistatusParser, UnsafeXML, sabre_message, to_response
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse
from tests.recordings import load

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<d:multistatus xmlns:d="DAV:"><d:response><d:href>&lol9;</d:href></d:response></d:multistatus>"""

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<d:multistatus xmlns:d="DAV:"><d:response><d:href>&xxe;</d:href></d:response></d:multistatus>"""

PARAMETER_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;]>
<d:multistatus xmlns:d="DAV:"/>"""


@pytest.mark.parametrize("payload", [BILLION_LAUGHS, XXE, PARAMETER_ENTITY], ids=["bomb", "xxe", "param"])
def test_documents_with_a_dtd_are_refused_before_any_expansion(payload: bytes) -> None:
    """Entity bombs and external entities never expand: the DTD itself is refused."""
    parser = MultistatusParser("cloud.example.com", to_response)
    with pytest.raises(UnsafeXML, match="refusing XML with a DTD"):
        parser.feed(payload, final=True)


def test_malformed_xml_is_an_invalid_response() -> None:
    with pytest.raises(UnsafeXML, match="does not parse"):
        MultistatusParser("h", to_response).feed(b"<d:multistatus xmlns:d='DAV:'><d:response>", final=True)


def test_a_recorded_listing_fed_byte_by_byte_yields_each_response_once() -> None:
    """Responses are handed out as soon as they are complete, whatever the chunking."""
    body = load("webdav_propfind_props").body.encode()
    parser = MultistatusParser("h", to_response)
    seen = []
    for i in range(len(body)):
        seen += parser.feed(body[i : i + 1])
    seen += parser.feed(b"", final=True)
    assert [r.href for r in seen] == [
        "/remote.php/dav/files/admin/",
        "/remote.php/dav/files/admin/Notes/",
        "/remote.php/dav/files/admin/welcome.txt",
    ]
    welcome = seen[2]
    assert welcome.text("{DAV:}getcontentlength") == "164"
    assert welcome.text("{http://owncloud.org/ns}fileid") == "3"
    # Properties of a 404 propstat are not reported as present.
    assert "{DAV:}getcontentlength" not in seen[0].props


def test_the_sync_token_outside_responses_is_kept() -> None:
    parser = MultistatusParser("h", to_response)
    parser.feed(load("caldav_sync_collection").body.encode(), final=True)
    assert parser.sync_token == "http://sabre.io/ns/sync/6"


def test_sabre_error_messages_are_extracted_safely() -> None:
    assert sabre_message(load("webdav_move_no_overwrite_412").body) == (
        "The destination node already exists, and the overwrite header is set to false"
    )
    assert sabre_message(XXE.decode()) is None
    assert sabre_message("plain text") is None


def _listing(entries: int, prop: bytes = b"x") -> bytes:
    entry = b"<d:response><d:href>/f/%d</d:href><d:propstat><d:prop><d:displayname>%s</d:displayname>"
    entry += b"</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
    body = b"".join(entry % (i, prop) for i in range(entries))
    return b"<?xml version='1.0'?><d:multistatus xmlns:d='DAV:'>" + body + b"</d:multistatus>"


@pytest.mark.parametrize("payload", [BILLION_LAUGHS, XXE], ids=["bomb", "xxe"])
def test_a_dtd_split_across_chunks_is_still_refused(payload: bytes) -> None:
    parser = MultistatusParser("h", to_response)

    def feed_bytewise() -> None:
        for i in range(len(payload)):
            assert parser.feed(payload[i : i + 1]) == []
        parser.feed(b"", final=True)

    with pytest.raises(UnsafeXML, match="refusing XML with a DTD"):
        feed_bytewise()


def test_a_dtd_after_the_root_element_does_not_parse() -> None:
    late = b"<d:multistatus xmlns:d='DAV:'><!DOCTYPE x [<!ENTITY a 'b'>]></d:multistatus>"
    with pytest.raises(UnsafeXML, match="does not parse"):
        MultistatusParser("h", to_response).feed(late, final=True)


def test_the_entry_limit_counts_each_entry_not_the_whole_body() -> None:
    """20,000 small entries (about 3 MiB) under a 4 KiB entry limit: every one is read."""
    body = _listing(20_000)
    parser = MultistatusParser("h", to_response, max_entry_bytes=4096)
    seen = parser.feed(body[: len(body) // 2]) + parser.feed(body[len(body) // 2 :], final=True)
    assert len(seen) == 20_000
    assert seen[-1].href == "/f/19999"
    assert seen[-1].text("{DAV:}displayname") == "x"


@pytest.mark.parametrize("chunk", [1, 4096, 10**9], ids=["bytewise", "4k", "whole"])
def test_an_entry_over_the_limit_is_refused_and_one_well_below_is_not(chunk: int) -> None:
    limit = 64 * 1024

    def feed_all(body: bytes) -> list[object]:
        parser = MultistatusParser("h", to_response, max_entry_bytes=limit)
        seen: list[object] = []
        for i in range(0, len(body), chunk):
            seen += parser.feed(body[i : i + chunk])
        return seen + parser.feed(b"", final=True)

    assert len(feed_all(_listing(3, b"y" * (limit * 3 // 4)))) == 3
    for entries in (1, 2):  # the last entry, and one the next starts right after
        with pytest.raises(
            InvalidResponse, match=r"larger than 65536 bytes \(NEXTCLOUD_MAX_DAV_ENTRY_BYTES\)"
        ):
            feed_all(_listing(entries, b"y" * (limit + 1)))


def test_text_outside_entries_is_bounded_too() -> None:
    body = b"<d:multistatus xmlns:d='DAV:'>" + b"z" * 200_000 + b"</d:multistatus>"
    with pytest.raises(InvalidResponse, match="NEXTCLOUD_MAX_DAV_ENTRY_BYTES"):
        MultistatusParser("h", to_response, max_entry_bytes=16 * 1024).feed(body, final=True)


def test_deep_nesting_in_one_huge_chunk_is_refused_early() -> None:
    """A decoded chunk of any size is fed in slices: the depth check comes after the first."""
    parser = MultistatusParser("h", to_response, max_depth=64)
    with pytest.raises(UnsafeXML, match=r"deeper than 64 \(NEXTCLOUD_MAX_XML_DEPTH\)"):
        parser.feed(b"<d:multistatus xmlns:d='DAV:'>" + b"<a>" * 5_000_000)
    assert parser._fed <= 128 * 1024  # stopped after a slice, not after 15 MB


def test_an_entry_nesting_too_deep_is_refused_though_it_closed_within_one_slice() -> None:
    """The depth of what was closed between two checks counts too, not only what is open."""
    deep = b"<d:response><d:href>/f</d:href>" + b"<a>" * 70 + b"</a>" * 70 + b"</d:response>"
    shallow = b"<d:response><d:href>/g</d:href>" + b"<a>" * 50 + b"</a>" * 50 + b"</d:response>"
    head, tail = b"<d:multistatus xmlns:d='DAV:'>", b"</d:multistatus>"
    assert [
        r.href for r in MultistatusParser("h", to_response).feed(head + shallow + shallow + tail, final=True)
    ] == [
        "/g",
        "/g",
    ]
    for body in (head + deep + shallow + tail, head + shallow + deep + tail):
        with pytest.raises(UnsafeXML, match=r"deeper than 64 \(NEXTCLOUD_MAX_XML_DEPTH\)"):
            MultistatusParser("h", to_response).feed(body, final=True)


def test_an_entry_is_handed_out_by_the_slice_after_it_ends_and_the_last_at_the_end() -> None:
    body = _listing(3)
    parser = MultistatusParser("h", to_response)
    cut = body.index(b"</d:response>") + len(b"</d:response>") + 1
    assert parser.feed(body[:cut]) == []  # the first is complete, but nothing says so yet
    assert [r.href for r in parser.feed(body[cut:])] == ["/f/0", "/f/1"]
    assert [r.href for r in parser.feed(b"", final=True)] == ["/f/2"]


@pytest.mark.parametrize("size", ["²", "1" * 5000, "-1", "12 ", "0x10"])
def test_a_size_or_id_that_is_no_plain_count_is_left_out_not_a_failure(size: str) -> None:
    """A hostile server's `oc:size` or `oc:fileid` (a superscript digit, which `isdigit` accepts
    and `int` refuses; more digits than Python converts) gives an entry without it."""
    body = (
        '<d:multistatus xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:response>'
        "<d:href>/remote.php/dav/files/alice/a.txt</d:href><d:propstat><d:prop>"
        f'<oc:size>{size}</oc:size><oc:fileid>{size}</oc:fileid><d:getetag>"e"</d:getetag>'
        "<d:resourcetype/></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>"
        "</d:response></d:multistatus>"
    ).encode()
    (key,) = MultistatusParser("host", entry_key).feed(body, final=True)
    entry = entry_of(key, "/remote.php/dav/files/alice")
    assert entry is not None
    assert (entry.path, entry.kind, entry.etag) == ("a.txt", "file", "e")
    assert (entry.size, entry.file_id) == (12 if size == "12 " else None, 12 if size == "12 " else None)


def test_an_entry_is_read_from_its_ok_propstats_only() -> None:
    """What a listing reads of an entry straight from its element is what a `DavResponse` holds:
    the href, whether it is a collection, the texts of the properties Nextcloud found (a 404
    propstat's empty ones are not read as empty texts), the last propstat sent winning."""
    body = (
        b'<d:multistatus xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:response>'
        b"<d:href> /remote.php/dav/files/alice/Docs/ </d:href>"
        b"<d:propstat><d:prop><d:getetag>&quot;old&quot;</d:getetag></d:prop>"
        b"<d:status>HTTP/1.1 200 OK</d:status></d:propstat>"
        b"<d:propstat><d:prop><d:getlastmodified>Mon, 23 Nov 2026 18:04:30 GMT</d:getlastmodified>"
        b'<d:getetag>"new"</d:getetag><d:resourcetype><d:collection/></d:resourcetype>'
        b"<oc:size> 42 </oc:size></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>"
        b"<d:propstat><d:prop><d:getcontenttype/><oc:fileid/></d:prop>"
        b"<d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>"
        b"</d:response></d:multistatus>"
    )
    (key,) = MultistatusParser("host", entry_key).feed(body, final=True)
    (item,) = MultistatusParser("host", to_response).feed(body, final=True)
    assert key == (
        "/remote.php/dav/files/alice/Docs/",
        True,
        "42",
        None,
        "Mon, 23 Nov 2026 18:04:30 GMT",
        '"new"',
        None,
        None,
    )
    assert (item.href, item.text("{DAV:}getetag"), item.text("{DAV:}getcontenttype")) == (
        key[0],
        key[5],
        None,
    )
    entry = entry_of(key, "/remote.php/dav/files/alice")
    assert entry is not None
    assert (entry.path, entry.kind, entry.size, entry.etag, entry.mime) == (
        "Docs",
        "directory",
        42,
        "new",
        None,
    )
