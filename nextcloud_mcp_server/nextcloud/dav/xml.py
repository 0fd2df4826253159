"""DAV XML, read safely and incrementally.

Responses from a server are untrusted input. The parser:
- refuses any document with a DTD (`<!DOCTYPE ...>`): no entity expansion ("billion laughs"), no
  external entities (XXE), no parameter entities;
- is fed the body chunk by chunk and hands out each `<d:response>` as soon as it is complete, then
  forgets it, so a PROPFIND of 10,000 entries never holds more than one entry's tree;
- refuses an entry larger than `max_entry_bytes`, elements nested deeper than `max_depth` and a
  body larger than the request's limit (`http.XmlLimits`, set from the settings), and stops
  reading there: a 300 MiB property or a million nested elements cost the limit, not their size.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from xml.etree.ElementTree import Element, ParseError, TreeBuilder, XMLParser
from xml.parsers import expat

from nextcloud_mcp_server.nextcloud.errors import InvalidResponse
from nextcloud_mcp_server.nextcloud.http import XML_LIMITS, StreamedAnswer, XmlLimits
from nextcloud_mcp_server.nextcloud.sabre import sabre_message
from nextcloud_mcp_server.numbers import ascii_number

__all__ = [
    "APPLE",
    "CALDAV",
    "CS",
    "DAV",
    "NC_COM",
    "NC_ORG",
    "OC",
    "DavResponse",
    "MultistatusParser",
    "UnsafeXML",
    "answer_chunks",
    "check_root",
    "multistatus_parser",
    "parse_multistatus",
    "prop_text",
    "read_multistatus",
    "read_multistatus_batches",
    "read_props",
    "sabre_message",
    "status_code",
    "to_response",
    "xml_escape",
]

DAV = "DAV:"
CALDAV = "urn:ietf:params:xml:ns:caldav"
CS = "http://calendarserver.org/ns/"
APPLE = "http://apple.com/ns/ical/"
OC = "http://owncloud.org/ns"
NC_ORG = "http://nextcloud.org/ns"
NC_COM = "http://nextcloud.com/ns"  # Nextcloud's calendar trash bin uses this one


class UnsafeXML(InvalidResponse):
    """The server sent XML with a DTD, or XML that does not parse."""


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


@dataclass
class DavResponse:
    """One `<d:response>`: its href, and the properties a `200` propstat returned."""

    href: str
    status: int | None = None
    props: dict[str, Element] = field(default_factory=dict)

    def text(self, name: str) -> str | None:
        return prop_text(self.props.get(name))

    def children(self, name: str) -> list[str]:
        """Tag names of a property's child elements (e.g. the kinds in `resourcetype`)."""
        element = self.props.get(name)
        return [child.tag for child in element] if element is not None else []


def status_code(text: str | None) -> int | None:
    """The code of a DAV status line (`HTTP/1.1 200 OK`: 200), or None."""
    parts = (text or "").split()
    return ascii_number(parts[1], max_digits=3) if len(parts) > 1 else None


_HREF, _STATUS, _PROPSTAT, _PROP, _RESPONSE = (
    f"{{{DAV}}}{n}" for n in ("href", "status", "propstat", "prop", "response")
)
_SYNC_TOKEN = f"{{{DAV}}}sync-token"
_OK = "HTTP/1.1 200 OK"
# The parser is fed at most this much at a time: limits are checked between slices, so a decoded
# chunk of any size builds at most one slice of tree before a check.
_SLICE = 64 * 1024


def to_response(element: Element) -> DavResponse:
    """A `<d:response>` element's href, status and the properties of its 2xx propstats."""
    result = DavResponse(href="")
    for child in element:
        tag = child.tag
        if tag == _PROPSTAT:
            code = status_code(child.findtext(_STATUS))
            prop = child.find(_PROP)
            if prop is not None and code is not None and 200 <= code < 300:
                for item in prop:
                    result.props[item.tag] = item
        elif tag == _HREF:
            result.href = (child.text or "").strip()
        elif tag == _STATUS:
            result.status = status_code(child.text)
    return result


def prop_text(element: Element | None) -> str | None:
    """A property's text, without surrounding space (None when it was not sent)."""
    if element is None:
        return None
    if not len(element):  # plain text, as most properties are: no walk of its subtree
        return (element.text or "").strip()
    return "".join(element.itertext()).strip()


def read_props(element: Element, slots: Mapping[str, int], found: list[Element | None]) -> str:
    """The href of a `<d:response>` element; each property named in `slots` that its 2xx
    propstats hold is put in `found` at its slot (the last one sent winning, as in
    `to_response`). For a caller that reads a few properties of thousands of entries: no
    `DavResponse` and no dictionary of every property is built (ADR 0110)."""
    href = ""
    for child in element:
        tag = child.tag
        if tag == _PROPSTAT:
            status = child.findtext(_STATUS)
            if status != _OK:  # what Nextcloud sends for the properties it has, compared first
                code = status_code(status)
                if code is None or not 200 <= code < 300:
                    continue
            prop = child.find(_PROP)
            if prop is None:
                continue
            for item in prop:
                slot = slots.get(item.tag)
                if slot is not None:
                    found[slot] = item
        elif tag == _HREF:
            href = (child.text or "").strip()
    return href


T = TypeVar("T")


class _PrologDone(Exception):
    """The guard reached the root element: no DTD can follow."""


def _report(parser: XMLParser, queue: list[tuple[str, Element]], events: tuple[str, ...]) -> None:
    # ElementTree's own pull parser is this call (`XMLPullParser.__init__`): the C parser appends
    # the events asked for to the queue. It is asked for the root's start only, then for nothing:
    # an event per element through Python was half of a listing's CPU (ADR 0104).
    parser._setevents(queue, events)  # type: ignore[attr-defined]


class MultistatusParser(Generic[T]):
    """Push parser for `<d:multistatus>` bodies. `feed()` returns the responses completed so far,
    each made by `build` from its `<d:response>` element (a `DavResponse` unless a caller that
    reads only a few properties of thousands of entries reads them straight from the element).

    ElementTree's C parser builds the tree without a Python call per element: after each slice
    fed, the root's children but the last are complete (the parser has moved past them); they
    are read and taken out of the tree, so memory stays about one slice deep. A plain expat
    parser without element callbacks reads the prolog first and refuses a DTD before the tree
    builder sees any of it (a DTD can only come before the root element; after it, it is a
    syntax error).

    Entry size is counted in bytes of the body between the slices where the root's children
    start, so a stretch outside entries is bounded the same way: an entry over the limit is
    always refused, one up to three quarters of it always read (slices are an eighth of the
    limit at most). Depth is checked on the open elements after each slice and on each entry
    read, so no element deeper than `max_depth` is handed out and an unclosed nesting stops
    within one slice."""

    def __init__(
        self,
        host: str,
        build: Callable[[Element], T],
        *,
        max_entry_bytes: int = 8 * 1024 * 1024,
        max_depth: int = 64,
    ) -> None:
        self._host = host
        self._build = build
        self._max_entry_bytes = max_entry_bytes
        self._max_depth = max_depth
        guard = expat.ParserCreate()
        guard.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        guard.StartDoctypeDeclHandler = self._refuse_dtd
        guard.EntityDeclHandler = self._refuse_dtd
        guard.ExternalEntityRefHandler = self._refuse_dtd  # type: ignore[assignment]
        guard.StartElementHandler = self._prolog_done
        self._guard: Any = guard
        self._tree = XMLParser(target=TreeBuilder())  # noqa: S314 (the guard refuses any DTD first)
        self._events: list[tuple[str, Element]] = []
        _report(self._tree, self._events, ("start",))
        self._root: Element | None = None
        self._last: Element | None = None  # the root's last child after the previous slice
        self._fed = 0  # bytes fed so far
        self._mark = 0  # bytes fed before the slice where the root's last child started
        self._slice = max(64, min(_SLICE, max_entry_bytes // 8))
        self.sync_token: str | None = None
        self.root: str | None = None

    def _refuse_dtd(self, *args: Any) -> None:
        raise UnsafeXML(self._host, "refusing XML with a DTD or entities (possible XXE or entity bomb)")

    def _prolog_done(self, *args: Any) -> None:
        raise _PrologDone

    def _screen(self, data: bytes, final: bool) -> None:
        """Run the bytes before the root element through the guard."""
        try:
            self._guard.Parse(data, final)
        except _PrologDone:
            self._guard = None
        except expat.ExpatError as exc:
            raise UnsafeXML(self._host, f"the XML answer does not parse ({exc})") from None

    def feed(self, data: bytes, final: bool = False) -> list[T]:
        done: list[T] = []
        for start in range(0, len(data), self._slice):
            self._feed(data[start : start + self._slice], False, done)
        if final:
            self._feed(b"", True, done)
        return done

    def _feed(self, data: bytes, final: bool, done: list[T]) -> None:
        if self._guard is not None:
            self._screen(data, final)
        slice_start, self._fed = self._fed, self._fed + len(data)
        try:
            if data:
                self._tree.feed(data)
            if final:
                self._tree.close()
        except ParseError as exc:
            raise UnsafeXML(self._host, f"the XML answer does not parse ({exc})") from None
        root = self._root
        if root is None:
            if not self._events:
                self._check_size()
                return
            root = self._root = self._events[0][1]
            self.root = root.tag
            _report(self._tree, self._events, ())
            self._events.clear()
        self._check_size()  # the stretch since the last child started, with this slice
        count = len(root)
        last = root[-1] if count else None
        if last is not self._last:
            self._last, self._mark = last, slice_start
        self._check_depth(root, 1)
        ready = count if final else count - 1
        if ready > 0:
            children = root[:ready]
            del root[:ready]
            self._take(children, done)

    def _check_size(self) -> None:
        if self._fed - self._mark > self._max_entry_bytes:
            raise InvalidResponse(
                self._host,
                f"a DAV response entry is larger than {self._max_entry_bytes} bytes "
                "(NEXTCLOUD_MAX_DAV_ENTRY_BYTES)",
            )

    def _check_depth(self, node: Element, depth: int) -> None:
        """Refuse when the elements still open (the last child at each level) nest too deep."""
        while len(node):
            node = node[-1]
            depth += 1
            if depth > self._max_depth:
                self._too_deep()

    def _too_deep(self) -> None:
        raise UnsafeXML(
            self._host,
            f"the XML answer nests deeper than {self._max_depth} (NEXTCLOUD_MAX_XML_DEPTH)",
        )

    def _check_entry_depth(self, element: Element) -> None:
        """Refuse an entry with an element deeper than the limit; the root's child is at 2."""
        if len(list(element.iter())) + 1 <= self._max_depth:
            return  # fewer elements than the limit cannot nest deeper than it
        below: list[tuple[Element, int]] = [(element, 2)]
        while below:
            node, depth = below.pop()
            if depth > self._max_depth:
                self._too_deep()
            below.extend((child, depth + 1) for child in node)

    def _take(self, children: list[Element], done: list[T]) -> None:
        for element in children:
            self._check_entry_depth(element)
            tag = element.tag
            if tag == _RESPONSE:
                done.append(self._build(element))
            elif tag == _SYNC_TOKEN:
                self.sync_token = (element.text or "").strip()


def parse_multistatus(response: StreamedAnswer, host: str) -> AsyncIterator[DavResponse]:
    """Yield each `<d:response>` of a streamed 207 body as soon as it is complete."""
    return read_multistatus(response, host, to_response)


async def read_multistatus(
    response: StreamedAnswer, host: str, build: Callable[[Element], T]
) -> AsyncIterator[T]:
    """Yield what `build` makes of each `<d:response>` of a streamed 207 body, as soon as it is
    complete."""
    async for batch in read_multistatus_batches(response, host, build):
        for item in batch:
            yield item


async def read_multistatus_batches(
    response: StreamedAnswer, host: str, build: Callable[[Element], T]
) -> AsyncIterator[list[T]]:
    """As `read_multistatus`, the responses completed by each chunk of the body together: for a
    caller that does per-entry work faster over many at once (`paths.relatives`)."""
    parser = multistatus_parser(response, host, build)
    async for chunk in answer_chunks(response, host):
        batch = parser.feed(chunk)
        if batch:
            yield batch
    batch = parser.feed(b"", final=True)
    if batch:
        yield batch
    check_root(parser, host)


def multistatus_parser(
    response: StreamedAnswer, host: str, build: Callable[[Element], T]
) -> MultistatusParser[T]:
    """A parser for `response`'s body, with the limits its request was sent with."""
    limits = _limits(response)
    return MultistatusParser(host, build, max_entry_bytes=limits.entry_bytes, max_depth=limits.depth)


def _limits(response: StreamedAnswer) -> XmlLimits:
    limits = response.extras.get(XML_LIMITS)
    return limits if isinstance(limits, XmlLimits) else XmlLimits(8 * 1024 * 1024, 32 * 1024 * 1024, 64)


async def answer_chunks(response: StreamedAnswer, host: str) -> AsyncIterator[bytes]:
    """The body's decoded chunks, refused past the request's limit of bytes."""
    total = _limits(response).total_bytes
    received = 0
    async for chunk in response.aiter_bytes():
        received += len(chunk)  # decoded bytes: a compressed answer is bounded too
        if received > total:
            raise InvalidResponse(
                host,
                f"the answer is larger than {total} bytes; reading stopped there "
                "(NEXTCLOUD_MAX_ANSWER_BYTES)",
            )
        yield chunk


def check_root(parser: MultistatusParser[Any], host: str) -> None:
    """After the last chunk: refuse an answer whose root is not a DAV multistatus."""
    if parser.root not in (f"{{{DAV}}}multistatus", None):
        raise UnsafeXML(host, f"expected a DAV multistatus, got {parser.root}")
