"""A multistatus answer read against the previous answer to the same request, by its bytes.

A folder that changed is mostly as it was: Nextcloud writes each `<d:response>` of an unchanged
entry as the same bytes as before (its href and every property text the same, in the same
order). So the previous answer's responses are kept by their bytes, with what each was read as,
and only the responses whose bytes are new are parsed: those are put together with the answer's
own prolog and root into a document of their own, which the same parser reads with the same
limits (ADR 0116). An answer not in the shape Nextcloud writes (responses one after another
under the root, the prolog and root start tag as before) is parsed whole, as any other.

What a response was read as depends only on its bytes and on the prolog and root start tag before
it (which bind the namespace prefixes): the prolog must be the same bytes too. An answer's
parts (split where one response ends and the next begins) are paired with what was read from
them by place, and only when there are as many parts as the parser handed out responses;
anything else keeps nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Generic, TypeVar
from xml.etree.ElementTree import Element

from nextcloud_mcp_server.nextcloud.dav.xml import (
    answer_chunks,
    check_root,
    multistatus_parser,
)
from nextcloud_mcp_server.nextcloud.http import StreamedAnswer

__all__ = ["AnswerBytes", "Responses", "read_against", "reuse", "split"]

E = TypeVar("E")
T = TypeVar("T")

OPEN = b"<d:response>"
_CLOSE = b"</d:response>"
_END = b"</d:multistatus>"
_BETWEEN = _CLOSE + OPEN
# what a response held by its bytes costs beyond them (the bytes object, its slot in the
# dictionary): 51 bytes measured with tracemalloc over 10,000 responses
_PER_RESPONSE = 64


class Responses(Generic[T]):
    """An answer's bytes and what each of its responses was read as, in order. They are split by
    response only when a later answer is read against them (a folder's first listing pays
    nothing for it); `size` is the bytes held."""

    __slots__ = ("_body", "_by_bytes", "_items", "size")

    def __init__(self, body: list[bytes], items: list[T], size: int) -> None:
        self._body: list[bytes] | None = body
        self._items: list[T] | None = items
        self._by_bytes: tuple[bytes, dict[bytes, T]] | None = None
        self.size = size

    @classmethod
    def split_already(cls, head: bytes, read: dict[bytes, T], size: int) -> Responses[T]:
        done: Responses[T] = cls([], [], size)
        done._body = done._items = None
        done._by_bytes = (head, read)
        return done

    def by_bytes(self) -> tuple[bytes, dict[bytes, T]] | None:
        """The bytes before the first response, and what each response was read as by its bytes
        between its start and end tags; None when the answer was not in the shape."""
        body, items = self._body, self._items
        if body is not None and items is not None:
            self._body = self._items = None
            shape = split(b"".join(body))
            if shape is not None and len(shape[1]) == len(items):
                self._by_bytes = (shape[0], dict(zip(shape[1], items, strict=True)))
        return self._by_bytes


class AnswerBytes(Generic[T]):
    """Handed to a multistatus reader: the previous answer's responses in (`before`), this
    answer's out (`after`, None when it was larger than `cap` bytes or not in the shape)."""

    __slots__ = ("after", "before", "cap")

    def __init__(self, before: Responses[T] | None, cap: int) -> None:
        self.before = before
        self.cap = cap
        self.after: Responses[T] | None = None


def split(body: bytes) -> tuple[bytes, list[bytes]] | None:
    """The bytes before the first `<d:response>`, and what is between each response's start and
    end tags, when the body is in the shape Nextcloud writes: responses one right after another
    and the root's end tag after the last (space around it allowed). None otherwise. Bytes
    between two responses make one part of them, which no response reads as: a previous answer's
    parts are paired with its responses only when there are as many (`Responses.by_bytes`), and
    new parts must read as one response each (`reuse`)."""
    parts = body.split(_BETWEEN)  # the body is split once, not copied first
    start = parts[0].find(OPEN)
    if start < 0:
        return None
    head, parts[0] = parts[0][:start], parts[0][start + len(OPEN) :]
    last = parts[-1]
    end = last.rfind(_END)
    if end < 0 or last[end + len(_END) :].strip():
        return None
    last = last[:end].rstrip()
    if not last.endswith(_CLOSE):
        return None
    parts[-1] = last[: -len(_CLOSE)]
    return head, parts


def reuse(
    body: bytes, before: Responses[T], parse: Callable[[bytes], list[T]]
) -> tuple[list[T], Responses[T]] | None:
    """What each response of `body` is read as, in order, and the responses to keep for the next
    answer: a response sent as before is what it was read as then; the new ones are read by
    `parse` from a document of their own. None when the body is not in the shape, its prolog is
    not the previous one, or the new responses do not read as one each (parse it whole then)."""
    shape, previous = split(body), before.by_bytes()
    if shape is None or previous is None or shape[0] != previous[0]:
        return None
    head, parts = shape
    known = previous[1]
    new = list(dict.fromkeys(part for part in parts if part not in known))
    fresh: dict[bytes, T] = {}
    if new:
        parsed = parse(b"".join((head, OPEN, _BETWEEN.join(new), _CLOSE, _END)))
        if len(parsed) != len(new):
            return None
        fresh = dict(zip(new, parsed, strict=True))
    items = [known[part] if part in known else fresh[part] for part in parts]
    return items, Responses.split_already(
        head, dict(zip(parts, items, strict=True)), len(body) + _PER_RESPONSE * len(parts)
    )


async def read_against(
    response: StreamedAnswer,
    host: str,
    build: Callable[[Element], E],
    finish: Callable[[list[E]], list[T]],
    memo: AnswerBytes[T],
) -> AsyncIterator[list[T]]:
    """As `read_multistatus_batches`, each batch of what `build` made then given to `finish`
    (what a caller does faster over many at once), with the previous answer's responses
    (`memo.before`) reused and this answer's left in `memo.after`. With a previous answer the
    body is held until it ends (up to `memo.cap` bytes; past that it is parsed as it streams in,
    as any answer) and its responses come in one batch at the end. Without one, the body is
    parsed as it streams in and held beside, up to `memo.cap` bytes."""
    chunks = answer_chunks(response, host)
    held: list[bytes] = []
    size = 0
    if memo.before is not None:
        async for chunk in chunks:
            held.append(chunk)
            size += len(chunk)
            if size > memo.cap:
                break
        else:

            def parse(doc: bytes) -> list[T]:
                parser = multistatus_parser(response, host, build)
                items = parser.feed(doc, final=True)
                check_root(parser, host)
                return finish(items) if items else []

            reused = reuse(b"".join(held), memo.before, parse)
            if reused is not None:
                items, memo.after = reused
                if items:
                    yield items
                return
    parser = multistatus_parser(response, host, build)
    kept: list[bytes] | None = [*held] if size <= memo.cap else None
    read: list[T] | None = [] if kept is not None else None

    def take(built: list[E]) -> list[T]:
        batch = finish(built) if built else []
        if read is not None:
            read.extend(batch)
        return batch

    for chunk in held:  # what was held for a reuse that did not happen
        if batch := take(parser.feed(chunk)):
            yield batch
    async for chunk in chunks:
        size += len(chunk)
        if kept is not None and size > memo.cap:
            kept = read = None
        if kept is not None:
            kept.append(chunk)
        if batch := take(parser.feed(chunk)):
            yield batch
    if batch := take(parser.feed(b"", final=True)):
        yield batch
    check_root(parser, host)
    if kept is not None and read is not None:
        memo.after = Responses(kept, read, size + _PER_RESPONSE * len(read))
