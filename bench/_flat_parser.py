"""A candidate measured by `dav_parsers.py` and not taken (docs/ADR/0090): a lean multistatus
parser for answers read as flat properties (file listings and searches): expat's callbacks keep,
per `<d:response>`, its href, its status and, of each 2xx propstat, every property's text and
the names of its child elements (`resourcetype`'s kinds), with no element tree at all. It cost
1.06-1.11x the server's tree parser's CPU on a 10,000-entry folder: Python callbacks per element
cost more than ElementTree's C tree building.

The same bounds as `xml.MultistatusParser`, which stays for answers whose properties are XML
(calendar data, privileges, ...): no DTD or entity declaration (refused when expat meets it,
before any entity could be used), no element deeper than `max_depth`, no entry (nor stretch
between entries) larger than `max_entry_bytes`, the root a DAV multistatus.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from xml.parsers import expat

from nextcloud_mcp_server.nextcloud.dav.xml import DAV, DavResponse, UnsafeXML
from nextcloud_mcp_server.nextcloud.errors import InvalidResponse
from nextcloud_mcp_server.nextcloud.http import XML_LIMITS, StreamedAnswer, XmlLimits

__all__ = ["FlatMultistatusParser", "FlatResponse", "parse_flat_multistatus"]

_SLICE = 64 * 1024
_MULTISTATUS, _RESPONSE, _HREF, _STATUS, _PROPSTAT, _PROP = (
    f"{{{DAV}}}{n}" for n in ("multistatus", "response", "href", "status", "propstat", "prop")
)


class FlatResponse(DavResponse):
    """A `<d:response>` as texts: `text(name)` and `children(name)` answer as `DavResponse`'s do;
    `props` stays empty (there are no elements)."""

    def __init__(
        self, href: str, status: int | None, texts: dict[str, str], kinds: dict[str, list[str]]
    ) -> None:
        super().__init__(href=href, status=status)
        self.texts = texts
        self.kinds = kinds

    def text(self, name: str) -> str | None:
        found = self.texts.get(name)
        return None if found is None else found.strip()

    def children(self, name: str) -> list[str]:
        return list(self.kinds.get(name, ()))


def _status_code(text: str) -> int | None:
    parts = text.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


class FlatMultistatusParser:
    """Push parser: `feed()` returns the responses completed so far (`xml.MultistatusParser`'s
    contract, with `FlatResponse`s)."""

    def __init__(self, host: str, *, max_entry_bytes: int = 8 * 1024 * 1024, max_depth: int = 64) -> None:
        self._host = host
        self._max_entry_bytes = max_entry_bytes
        self._max_depth = max_depth
        parser = expat.ParserCreate(namespace_separator="}")
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartDoctypeDeclHandler = self._refuse_dtd
        parser.EntityDeclHandler = self._refuse_dtd
        parser.ExternalEntityRefHandler = self._refuse_dtd  # type: ignore[assignment]
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._chars
        parser.buffer_text = True
        self._parser: Any = parser
        self._depth = 0
        self._fed = 0
        self._mark = 0
        self._slice = max(64, min(_SLICE, max_entry_bytes // 8))
        self._slice_start = 0
        self._done: list[FlatResponse] = []
        self._text: list[str] | None = None  # where character data goes now, if anywhere
        self._prop: str | None = None  # the property being read (depth 5)
        self._href: list[str] = []
        self._status: list[str] = []
        self._stat_status: list[str] = []
        self._stat_texts: dict[str, list[str]] = {}
        self._stat_kinds: dict[str, list[str]] = {}
        self._texts: dict[str, str] = {}
        self._kinds: dict[str, list[str]] = {}
        self.root: str | None = None

    def _refuse_dtd(self, *args: Any) -> None:
        raise UnsafeXML(self._host, "refusing XML with a DTD or entities (possible XXE or entity bomb)")

    def _start(self, name: str, attrs: Any) -> None:
        tag = "{" + name if "}" in name else name
        depth = self._depth = self._depth + 1
        if depth > self._max_depth:
            raise UnsafeXML(
                self._host, f"the XML answer nests deeper than {self._max_depth} (NEXTCLOUD_MAX_XML_DEPTH)"
            )
        if depth == 1:
            self.root = tag
        elif depth == 2:
            self._in_response = tag == _RESPONSE
            if self._in_response:
                self._mark = self._slice_start
                self._href, self._status, self._texts, self._kinds = [], [], {}, {}
        elif not self._in_response:
            return
        elif depth == 3:
            if tag == _HREF:
                self._text = self._href
            elif tag == _STATUS:
                self._text = self._status
            elif tag == _PROPSTAT:
                self._stat_status, self._stat_texts, self._stat_kinds = [], {}, {}
        elif depth == 4 and tag == _STATUS:
            self._text = self._stat_status
        elif depth == 5 and self._in_prop:
            self._prop = tag
            self._text = self._stat_texts.setdefault(tag, [])
            self._stat_kinds.setdefault(tag, [])
        elif depth == 6 and self._prop is not None:
            self._stat_kinds[self._prop].append(tag)
        if depth == 4:
            self._in_prop = tag == _PROP

    _in_prop = False
    _in_response = False

    def _end(self, name: str) -> None:
        depth = self._depth
        self._depth -= 1
        if depth == 5:
            self._prop, self._text = None, None
        elif depth == 4:
            self._in_prop = False
            self._text = None
        elif depth == 3:
            self._text = None
            if name == f"{DAV}}}propstat":
                code = _status_code("".join(self._stat_status))
                if code is not None and 200 <= code < 300:
                    for prop, parts in self._stat_texts.items():
                        self._texts[prop] = "".join(parts)
                    self._kinds.update(self._stat_kinds)
        elif depth == 2 and self._in_response:
            self._in_response = False
            self._check_size()
            self._mark = self._slice_start
            self._done.append(
                FlatResponse(
                    "".join(self._href).strip(), _status_code("".join(self._status)), self._texts, self._kinds
                )
            )

    def _chars(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)

    def feed(self, data: bytes, final: bool = False) -> list[FlatResponse]:
        for start in range(0, len(data), self._slice):
            self._feed(data[start : start + self._slice], False)
        if final:
            self._feed(b"", True)
        done, self._done = self._done, []
        return done

    def _feed(self, data: bytes, final: bool) -> None:
        self._slice_start, self._fed = self._fed, self._fed + len(data)
        try:
            self._parser.Parse(data, final)
        except expat.ExpatError as exc:
            raise UnsafeXML(self._host, f"the XML answer does not parse ({exc})") from None
        self._check_size()

    def _check_size(self) -> None:
        if self._fed - self._mark > self._max_entry_bytes:
            raise InvalidResponse(
                self._host,
                f"a DAV response entry is larger than {self._max_entry_bytes} bytes "
                "(NEXTCLOUD_MAX_DAV_ENTRY_BYTES)",
            )


async def parse_flat_multistatus(response: StreamedAnswer, host: str) -> AsyncIterator[FlatResponse]:
    """`xml.parse_multistatus` for flat properties: each `<d:response>` as soon as it is complete."""
    limits = response.extras.get(XML_LIMITS)
    if not isinstance(limits, XmlLimits):
        limits = XmlLimits(8 * 1024 * 1024, 32 * 1024 * 1024, 64)
    parser = FlatMultistatusParser(host, max_entry_bytes=limits.entry_bytes, max_depth=limits.depth)
    received = 0
    async for chunk in response.aiter_bytes():
        received += len(chunk)  # decoded bytes: a compressed answer is bounded too
        if received > limits.total_bytes:
            raise InvalidResponse(
                host,
                f"the answer is larger than {limits.total_bytes} bytes; reading stopped there "
                "(NEXTCLOUD_MAX_ANSWER_BYTES)",
            )
        for item in parser.feed(chunk):
            yield item
    for item in parser.feed(b"", final=True):
        yield item
    if parser.root not in (_MULTISTATUS, None):
        raise UnsafeXML(host, f"expected a DAV multistatus, got {parser.root}")
