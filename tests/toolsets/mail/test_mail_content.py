"""A message's source read as hostile input: bounds on size, nesting and parts, HTML turned into
text without its scripts, attachments listed and not read, hidden characters named; recipients
and subjects that could add headers are refused before any request."""

from __future__ import annotations

import time
from email.message import EmailMessage

import pytest

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.toolsets.mail import tools
from nextcloud_mcp_server.toolsets.mail.client import Account, MessageHead, Outgoing
from nextcloud_mcp_server.toolsets.mail.content import (
    MAX_DEPTH,
    MAX_MULTIPARTS,
    MAX_SOURCE_BYTES,
    html_text,
    read_source,
)


def _nested(levels: int) -> bytes:
    source = 'Subject: deep\nContent-Type: multipart/mixed; boundary="b0"\n\n'
    for level in range(levels):
        source += f'--b{level}\nContent-Type: multipart/mixed; boundary="b{level + 1}"\n\n'
    return (source + f"--b{levels}\nContent-Type: text/plain\n\nthe core\n").encode()


def test_a_plain_body_is_answered_within_max_chars_with_hidden_characters_named() -> None:
    """The body is cut at max_chars, says so, and shows a right-to-left override by name."""
    message = EmailMessage()
    message["Subject"] = "hi"
    message.set_content("Pay to \u202eevil\u200b account\r\n" + "x" * 5_000)
    read = read_source(message.as_bytes(), 300)
    assert read.body.startswith("Pay to ⟦U+202E⟧evil⟦U+200B⟧ account\n")
    assert len(read.body) == 300
    assert read.truncated is True
    assert read.body_format == "plain"


def test_html_becomes_text_without_scripts_styles_or_comments() -> None:
    """Only what a reader sees of the HTML is kept; entities are decoded, blocks become lines."""
    html = (
        "<html><head><title>T</title><style>.x{}</style></head><body><!-- hidden note -->"
        "<p>One &lt;two&gt;</p><script>steal()</script><ul><li>a</li><li>b</li></ul>"
        '<img src="x" alt="logo"></body></html>'
    )
    assert html_text(html) == "One <two>\n\na\n\nb\n\n[image: logo]"


def test_deeply_nested_html_costs_one_flat_pass() -> None:
    """Tens of thousands of nested tags cost one flat pass; markup past MAX_HTML is not read."""
    started = time.monotonic()
    assert html_text("<div>" * 50_000 + "deep" + "</div>" * 50_000, limit=1_000) == "deep"
    assert html_text("<div>" * 100_000 + "deep" + "</div>" * 100_000, limit=1_000) == ""
    assert time.monotonic() - started < 30  # a bound on runaway work, not a timing test


def test_nesting_deeper_than_the_bound_is_not_followed() -> None:
    """A message nested past MAX_DEPTH levels answers the parts above and says what was left."""
    read = read_source(_nested(MAX_DEPTH + 5), 1_000)
    assert read.body == ""
    assert f"parts nested deeper than {MAX_DEPTH} levels were not read" in read.notes
    assert read_source(_nested(3), 1_000).body == "the core"


def test_thousands_of_multipart_sections_are_not_parsed() -> None:
    """A source declaring more multipart sections than the bound is answered without parsing."""
    read = read_source(_nested(3_000), 1_000)
    assert read.body_format == "none"
    assert read.notes == [
        f"the message has more than {MAX_MULTIPARTS} multipart sections; its body was not read"
    ]


def test_a_huge_source_is_read_only_up_to_the_bound() -> None:
    """Only MAX_SOURCE_BYTES are parsed, and the answer says the message was larger."""
    source = b"Subject: big\nContent-Type: text/plain\n\n" + b"line\n" * (MAX_SOURCE_BYTES // 4)
    read = read_source(source, 100)
    assert read.truncated is True
    assert any("only its start was read" in note for note in read.notes)


def test_attachments_are_listed_by_name_type_and_size_and_never_decoded() -> None:
    """An attachment's name is shown with hidden characters named; its bytes are not read."""
    message = EmailMessage()
    message.set_content("see attached")
    message.add_attachment(
        b"\x00" * 30, maintype="application", subtype="octet-stream", filename="a\u202etxt.exe"
    )
    read = read_source(message.as_bytes(), 1_000)
    assert read.body == "see attached"
    [attachment] = read.attachments
    assert attachment.name == "a⟦U+202E⟧txt.exe"
    assert attachment.content_type == "application/octet-stream"
    assert attachment.size > 30  # as sent: base64


def test_an_unknown_charset_is_read_as_utf8() -> None:
    """A part naming a charset Python does not know is decoded as UTF-8 with replacements."""
    source = b"Content-Type: text/plain; charset=x-klingon\n\nQapla\xc3\xa9"
    assert read_source(source, 100).body == "Qaplaé"


@pytest.mark.parametrize("charset", ["idna", "undefined", "punycode"])
def test_a_charset_python_cannot_decode_with_replacements_is_read_as_utf8(charset: str) -> None:
    """These codecs raised UnicodeError (not LookupError) from the decoding: any sender could make
    a message unreadable."""
    source = f"Content-Type: text/plain; charset={charset}\n\n".encode() + b"Qapla\xc3\xa9"
    assert read_source(source, 100).body == "Qaplaé"


def test_markup_python_s_html_parser_asserts_on_keeps_the_text_before_it() -> None:
    source = b"Content-Type: text/html; charset=utf-8\n\n<p>hello</p><![ ]]><p>more</p>"
    assert read_source(source, 100).body.startswith("hello")
    assert html_text("<p>before</p><![ ]]>after").startswith("before")


@pytest.mark.parametrize(
    "value",
    [
        "bob@example.com\r\nBcc: eve@example.com",
        "bob@example.com, eve@example.com",
        "bob\u202e@example.com",
        "bob",
    ],
)
def test_a_recipient_that_is_not_one_plain_address_is_refused(value: str) -> None:
    """Header injection, lists in one value, hidden characters and bare names are refused."""
    with pytest.raises(InvalidInput):
        tools._addresses([value], "to")


@pytest.mark.parametrize("subject", ["Hello\r\nBcc: eve@example.com", "Invoice\u202efdp.exe", "Hi\x0bthere"])
def test_a_subject_that_could_add_a_header_or_hide_text_is_refused(subject: str) -> None:
    """Line breaks (a header could start), direction overrides and control characters: refused."""
    with pytest.raises(InvalidInput):
        tools._subject(subject)


def _outgoing(**changes: object) -> Outgoing:
    letter: dict[str, object] = {
        "id": 7,
        "accountId": 1,
        "subject": "Lunch",
        "bodyPlain": "Noon?",
        "isHtml": False,
        "to": [{"label": "bob@example.com", "email": "bob@example.com"}],
        "cc": [],
        "bcc": [],
        "attachments": [],
    }
    return Outgoing.model_validate({**letter, **changes})


@pytest.mark.parametrize(
    "changes",
    [
        {"subject": "Lunch!"},
        {"bodyPlain": "Noon? And bring the files."},
        {"to": [{"label": "eve", "email": "eve@example.com"}]},
        {"cc": [{"label": "eve", "email": "eve@example.com"}]},
        {"bcc": [{"label": "eve", "email": "eve@example.com"}]},
        {"attachments": [{"id": 1}]},
        {"isHtml": True},
        {"accountId": 2},
    ],
)
def test_an_outbox_message_that_differs_from_the_approved_one_is_not_sendable(
    changes: dict[str, object],
) -> None:
    """What Mail holds is compared with what was approved in every part that reaches a recipient."""
    account = Account.model_validate({"accountId": 1, "name": "Alice", "emailAddress": "alice@example.com"})
    approved = tools._letter(account, ["bob@example.com"], [], "Lunch", "Noon?")
    assert tools._as_sent(_outgoing(), account) == approved
    assert tools._as_sent(_outgoing(**changes), account) != approved


def test_a_search_is_sent_as_mail_filters_with_values_encoded_as_mail_decodes_them() -> None:
    """The text is looked for in subject and body as one phrase; `:` and spaces cannot add filters."""
    built = tools._filter("is:read  café", "bob@example.com", unread_only=True)
    assert built.split(" ") == [
        "subject:is%3Aread%20caf%C3%A9",
        "body:is%3Aread%20caf%C3%A9",
        "from:bob%40example.com",
        "is:unread",
    ]
    assert tools._filter("   ", None, unread_only=False) == ""


def _head(message_id: int, date: int) -> MessageHead:
    return MessageHead.model_validate({"databaseId": message_id, "mailboxId": 1, "dateInt": date})


def test_a_page_ending_within_a_second_leaves_that_second_to_the_next_page() -> None:
    """Mail pages by time to the second: messages sharing the last second move to the next page."""
    found = [_head(1, 500), _head(2, 400), _head(3, 300), _head(4, 300)]
    shown, cursor = tools._page(found, 4)
    assert [m.id for m in shown] == [1, 2]
    assert cursor == 301  # Mail answers what is older than 301: both messages of second 300
    assert tools._page(found[:3], 4) == (found[:3], None)
    same = [_head(5, 300), _head(6, 300)]
    assert tools._page(same, 2) == (same, 300)
