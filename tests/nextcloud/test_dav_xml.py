"""DAV XML is untrusted: entity bombs and external entities fail cleanly; big bodies stream."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.nextcloud.dav_xml import MultistatusParser, UnsafeXML, sabre_message
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
    parser = MultistatusParser("cloud.example.com")
    with pytest.raises(UnsafeXML, match="refusing XML with a DTD"):
        parser.feed(payload, final=True)


def test_malformed_xml_is_an_invalid_response() -> None:
    with pytest.raises(UnsafeXML, match="does not parse"):
        MultistatusParser("h").feed(b"<d:multistatus xmlns:d='DAV:'><d:response>", final=True)


def test_a_recorded_listing_fed_byte_by_byte_yields_each_response_once() -> None:
    """Responses are handed out as soon as they are complete, whatever the chunking."""
    body = load("webdav_propfind_props").body.encode()
    parser = MultistatusParser("h")
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
    parser = MultistatusParser("h")
    parser.feed(load("caldav_sync_collection").body.encode(), final=True)
    assert parser.sync_token == "http://sabre.io/ns/sync/6"


def test_sabre_error_messages_are_extracted_safely() -> None:
    assert sabre_message(load("webdav_move_no_overwrite_412").body) == (
        "The destination node already exists, and the overwrite header is set to false"
    )
    assert sabre_message(XXE.decode()) is None
    assert sabre_message("plain text") is None
