"""Text files found by their words whatever their encoding, as people save them: UTF-16 from
Windows' Notepad (with or without a byte order mark) and Windows-1252. Nextcloud names no charset
for what was uploaded: read as UTF-8, UTF-16 was indexed as "Q u a r t e r l y" and found by no
word. On the double and the real Nextcloud 29 and 34."""

from __future__ import annotations

import codecs
import time

import pytest

from nextcloud_mcp_server.index.engine import Filters
from nextcloud_mcp_server.index.query import parse_query
from nextcloud_mcp_server.index.sqlite import SQLiteIndex
from nextcloud_mcp_server.index.sync import Round, sync_files, text_of
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from tests.backends import Nextcloud

pytestmark = pytest.mark.integration
USER = "nextcloud:admin"


async def test_text_files_in_utf16_and_windows_1252_are_found_by_their_words(
    nextcloud: Nextcloud, client: NextcloudClient, index: SQLiteIndex
) -> None:
    admin = nextcloud.admin
    nextcloud.put_file(admin, "Texts/bom.txt", codecs.BOM_UTF16_LE + "Quarterly budget".encode("utf-16-le"))
    nextcloud.put_file(admin, "Texts/nobom.txt", "Quarterly forecast".encode("utf-16-le"))
    nextcloud.put_file(admin, "Texts/menu.txt", "crème brûlée".encode("cp1252"))
    nextcloud.put_file(admin, "Texts/plain.txt", "quarterly crème".encode())
    await sync_files(index, USER, await client.files(), Round(deadline=time.monotonic() + 120))
    found = {
        word: sorted(h.key for h in await index.search(USER, parse_query(word), Filters(), limit=10))
        for word in ("quarterly", "brûlée", "crème")
    }
    assert found == {
        "quarterly": ["Texts/bom.txt", "Texts/nobom.txt", "Texts/plain.txt"],
        "brûlée": ["Texts/menu.txt"],
        "crème": ["Texts/menu.txt", "Texts/plain.txt"],
    }


def test_a_character_cut_at_the_end_of_what_was_read_is_no_sign_of_another_charset() -> None:
    assert text_of("café".encode()[:-1], None, cut=True) == "caf\ufffd"
    assert text_of("café".encode("cp1252"), None) == "café"  # the whole file: é alone is no UTF-8
    assert text_of(b"plain", "idna") == "plain"  # idna raised UnicodeError with "replace"
