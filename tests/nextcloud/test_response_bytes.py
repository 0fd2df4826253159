"""A multistatus answer read against the previous one by its bytes (ADR 0116): only the responses
whose bytes are new are parsed, and what comes out is always what a full parse gives."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nextcloud_mcp_server.nextcloud.dav.files import EntryKey, entry_key
from nextcloud_mcp_server.nextcloud.dav.response_bytes import AnswerBytes, Responses, read_against, split
from nextcloud_mcp_server.nextcloud.dav.xml import UnsafeXML, read_multistatus_batches, xml_escape
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse
from nextcloud_mcp_server.nextcloud.http import XML_LIMITS, StreamedAnswer, XmlLimits

HEAD = b'<?xml version="1.0"?>\n<d:multistatus xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">'
END = b"</d:multistatus>"
FILES = "/remote.php/dav/files/alice/Changed/"


def _response(name: str, etag: str, size: int = 27) -> bytes:
    href = xml_escape(FILES + name).encode()
    return (
        b"<d:response><d:href>" + href + b"</d:href><d:propstat><d:prop>"
        b"<d:getlastmodified>Sun, 22 Nov 2026 02:01:21 GMT</d:getlastmodified><d:resourcetype/>"
        b"<d:getetag>&quot;" + etag.encode() + b"&quot;</d:getetag>"
        b"<oc:size>" + str(size).encode() + b"</oc:size>"
        b"</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
    )


def _body(entries: dict[str, str], head: bytes = HEAD, between: bytes = b"") -> bytes:
    folder = _response("", "folder-" + "-".join(sorted(entries.values())))
    return head + between.join([folder, *(_response(n, e) for n, e in entries.items())]) + END


def _answer(body: bytes, chunk: int = 1000, limits: XmlLimits | None = None) -> StreamedAnswer:
    pieces = [body[i : i + chunk] for i in range(0, len(body), chunk)]

    async def read_chunk() -> bytes:
        return pieces.pop(0) if pieces else b""

    answer = StreamedAnswer(200, {}, "http://nc/", read_chunk=read_chunk, release=lambda _: None, limit=None)
    if limits is not None:
        answer.extras[XML_LIMITS] = limits
    return answer


def _same(keys: list[EntryKey]) -> list[EntryKey]:
    return keys


class Counted:
    """`entry_key`, counting the responses it reads."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, element: object) -> EntryKey:
        self.calls += 1
        return entry_key(element)  # type: ignore[arg-type]


def _read(
    body: bytes,
    before: Responses[EntryKey] | None,
    cap: int = 10**8,
    build: Callable[..., EntryKey] = entry_key,
) -> tuple[list[EntryKey], AnswerBytes[EntryKey]]:
    memo = AnswerBytes(before, cap)

    async def run() -> list[EntryKey]:
        return [key async for batch in read_against(_answer(body), "nc", build, _same, memo) for key in batch]

    return asyncio.run(run()), memo


def _parsed(body: bytes) -> list[EntryKey]:
    async def run() -> list[EntryKey]:
        return [
            key async for batch in read_multistatus_batches(_answer(body), "nc", entry_key) for key in batch
        ]

    return asyncio.run(run())


def test_a_changed_answer_parses_only_its_new_responses_and_reads_as_a_full_parse() -> None:
    old = {f"file-{n:04}.txt": f"e{n}" for n in range(200)}
    first, memo = _read(_body(old), None)
    assert first == _parsed(_body(old))
    new = {**old, "added.txt": "new", "file-0007.txt": "changed"}
    del new["file-0100.txt"]
    counted = Counted()
    second, after = _read(_body(new), memo.after, build=counted)
    assert second == _parsed(_body(new))
    assert counted.calls == 3  # the folder itself, the added file, the changed one
    # and the answer after that is read against the second one
    third, _ = _read(_body(new), after.after, build=(again := Counted()))
    assert third == second
    assert again.calls == 0


def test_an_answer_with_another_prolog_is_parsed_whole() -> None:
    old = {"a.txt": "1", "b.txt": "2"}
    _, memo = _read(_body(old), None)
    # the same responses after a root start tag that declares one more prefix: nothing is reused
    other = HEAD.replace(b"xmlns:oc=", b'xmlns:s="http://sabredav.org/ns" xmlns:oc=')
    counted = Counted()
    keys, _ = _read(_body(old, head=other), memo.after, build=counted)
    assert keys == _parsed(_body(old, head=other))
    assert counted.calls == 3


def test_a_dtd_in_a_changed_answer_is_refused_as_in_any_other() -> None:
    old = {"a.txt": "1"}
    _, memo = _read(_body(old), None)
    hostile = HEAD.replace(b"\n", b'\n<!DOCTYPE d [<!ENTITY x "y">]>\n')
    with pytest.raises(UnsafeXML):
        _read(_body(old, head=hostile), memo.after)


def test_the_shape_is_responses_one_after_another_and_the_root_ending_the_body() -> None:
    body = _body({"a.txt": "1", "b.txt": "2"})
    shape = split(body)
    assert shape is not None
    assert shape[0] == HEAD
    assert len(shape[1]) == 3
    assert shape[1][1].startswith(b"<d:href>/remote.php/dav/files/alice/Changed/a.txt</d:href>")
    assert shape[1][1].endswith(b"</d:propstat>")
    assert split(body + b"\n") is not None
    assert split(body.replace(END, b"\n" + END)) is not None
    assert split(body + b"<!-- x -->") is None
    assert split(HEAD + END) is None  # no response at all
    assert split(body.replace(b"</d:response></d:multistatus>", b"</d:responsex></d:multistatus>")) is None


def test_space_between_responses_is_read_right_and_reused_for_nothing() -> None:
    # Nextcloud writes none; space between two responses leaves them one part, which pairs with
    # no single response: every answer is then parsed whole
    spaced = _body({"a.txt": "1", "b.txt": "2"}, between=b"\n")
    shape = split(spaced)
    assert shape is not None
    assert len(shape[1]) == 1
    first, memo = _read(spaced, None)
    assert first == _parsed(spaced)
    assert memo.after is not None
    assert memo.after.by_bytes() is None
    again, _ = _read(spaced, memo.after, build=(counted := Counted()))
    assert again == first
    assert counted.calls == 3


def test_a_response_tag_hidden_in_a_comment_keeps_nothing() -> None:
    # a comment inside a response hides `</d:response><d:response>`: the answer then holds one
    # more part than responses, each part in the shape; pairing them by place would be wrong, so
    # nothing is kept and the next answer is parsed whole
    hidden = _body({"a.txt": "1", "b.txt": "2"}).replace(
        b"Changed/b.txt</d:href>", b"Changed/b.txt</d:href><!-- </d:response><d:response> -->"
    )
    shape = split(hidden)
    assert shape is not None
    assert len(shape[1]) == 4  # the comment's `</d:response><d:response>` splits one response
    first, memo = _read(hidden, None)
    assert first == _parsed(hidden)
    assert len(first) == 3
    assert memo.after is not None
    assert memo.after.by_bytes() is None
    counted = Counted()
    again, _ = _read(hidden, memo.after, build=counted)
    assert again == first
    assert counted.calls == 3


def test_two_responses_in_one_new_part_are_parsed_whole() -> None:
    old = {"a.txt": "1"}
    _, memo = _read(_body(old), None)
    # a start tag written otherwise (`<d:response >`) leaves two responses in one new part, which
    # does not read as one response: the answer is parsed whole
    body = _body({"a.txt": "1", "b.txt": "2"}).replace(
        b"<d:response><d:href>/remote.php/dav/files/alice/Changed/b",
        b"<d:response ><d:href>/remote.php/dav/files/alice/Changed/b",
    )
    keys, _ = _read(body, memo.after)
    assert keys == _parsed(body)
    assert len(keys) == 3


def test_the_limits_hold_for_new_responses() -> None:
    old = {"a.txt": "1"}
    _, memo = _read(_body(old), None)
    body = _body({"a.txt": "1", "b" * 5000 + ".txt": "2"})
    limits = XmlLimits(entry_bytes=4096, total_bytes=10**6, depth=64)
    answer_memo = AnswerBytes(memo.after, 10**8)

    async def run() -> None:
        async for _ in read_against(_answer(body, limits=limits), "nc", entry_key, _same, answer_memo):
            pass

    with pytest.raises(InvalidResponse, match="larger than 4096"):
        asyncio.run(run())


def test_an_answer_over_the_cap_is_streamed_and_keeps_nothing() -> None:
    old = {f"f{n}.txt": str(n) for n in range(50)}
    body = _body(old)
    keys, memo = _read(body, None, cap=len(body) - 1)
    assert keys == _parsed(body)
    assert memo.after is None
    _, kept = _read(body, None)
    again, memo = _read(body, kept.after, cap=len(body) // 2)  # held, then streamed past the cap
    assert again == keys
    assert memo.after is None


_NAMES = st.text(alphabet="ab&<é ", min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(
    old=st.dictionaries(_NAMES, st.sampled_from(["1", "2", "3"]), max_size=12),
    new=st.dictionaries(_NAMES, st.sampled_from(["1", "2", "4"]), max_size=12),
    between=st.sampled_from([b"", b"\n", b" \n\t"]),
)
def test_read_against_any_earlier_answer_is_the_full_parse(
    old: dict[str, str], new: dict[str, str], between: bytes
) -> None:
    _, memo = _read(_body(old, between=between), None)
    keys, _ = _read(_body(new, between=between), memo.after)
    assert keys == _parsed(_body(new, between=between))
