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

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

import httpx2

from nextcloud_mcp_server.nextcloud.errors import InvalidResponse
from nextcloud_mcp_server.nextcloud.http import XML_LIMITS, XmlLimits

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
    "parse_multistatus",
    "sabre_message",
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


def _qname(name: str) -> str:
    """expat's "ns local" (namespace_separator=" ") as ElementTree's "{ns}local"."""
    namespace, _, local = name.rpartition(" ")
    return f"{{{namespace}}}{local}" if namespace else local


@dataclass
class DavResponse:
    """One `<d:response>`: its href, and the properties a `200` propstat returned."""

    href: str
    status: int | None = None
    props: dict[str, Element] = field(default_factory=dict)

    def text(self, name: str) -> str | None:
        element = self.props.get(name)
        if element is None:
            return None
        return "".join(element.itertext()).strip()

    def children(self, name: str) -> list[str]:
        """Tag names of a property's child elements (e.g. the kinds in `resourcetype`)."""
        element = self.props.get(name)
        return [child.tag for child in element] if element is not None else []


def _status_code(text: str | None) -> int | None:
    parts = (text or "").split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def _to_response(element: Element) -> DavResponse:
    href = (element.findtext(f"{{{DAV}}}href") or "").strip()
    result = DavResponse(href=href, status=_status_code(element.findtext(f"{{{DAV}}}status")))
    for propstat in element.iter(f"{{{DAV}}}propstat"):
        code = _status_code(propstat.findtext(f"{{{DAV}}}status"))
        prop = propstat.find(f"{{{DAV}}}prop")
        if prop is not None and code is not None and 200 <= code < 300:
            for child in prop:
                result.props[child.tag] = child
    return result


class MultistatusParser:
    """Push parser for `<d:multistatus>` bodies. `feed()` returns the responses completed so far."""

    def __init__(self, host: str, *, max_entry_bytes: int = 8 * 1024 * 1024, max_depth: int = 64) -> None:
        self._host = host
        self._max_entry_bytes = max_entry_bytes
        self._max_depth = max_depth
        self._entry_bytes = 0  # characters of names, attributes and text in the current <response>
        self._parser = expat.ParserCreate(namespace_separator=" ")
        self._parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        self._parser.StartDoctypeDeclHandler = self._refuse_dtd
        self._parser.EntityDeclHandler = self._refuse_dtd
        self._parser.ExternalEntityRefHandler = self._refuse_dtd  # type: ignore[assignment]
        self._parser.StartElementHandler = self._start
        self._parser.EndElementHandler = self._end
        self._parser.CharacterDataHandler = self._data
        self._builder: TreeBuilder | None = None
        self._depth = 0  # depth inside the current <response>
        self._path: list[str] = []  # element names outside a <response>
        self._text: list[str] = []
        self._done: list[DavResponse] = []
        self.sync_token: str | None = None
        self.root: str | None = None

    def _refuse_dtd(self, *args: Any) -> None:
        raise UnsafeXML(self._host, "refusing XML with a DTD or entities (possible XXE or entity bomb)")

    def _count(self, size: int) -> None:
        self._entry_bytes += size
        if self._entry_bytes > self._max_entry_bytes:
            raise InvalidResponse(
                self._host,
                f"a DAV response entry is larger than {self._max_entry_bytes} bytes "
                "(NEXTCLOUD_MAX_DAV_ENTRY_BYTES)",
            )

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        if len(self._path) + self._depth >= self._max_depth:
            raise UnsafeXML(
                self._host, f"the XML answer nests deeper than {self._max_depth} (NEXTCLOUD_MAX_XML_DEPTH)"
            )
        tag = _qname(name)
        if self.root is None:
            self.root = tag
        if self._builder is None and tag == f"{{{DAV}}}response":
            self._builder = TreeBuilder()
            self._depth = 0
            self._entry_bytes = 0
        if self._builder is not None:
            self._count(len(name) + sum(len(k) + len(v) for k, v in attrs.items()))
            self._depth += 1
            self._builder.start(tag, {_qname(k): v for k, v in attrs.items()})
        else:
            self._path.append(tag)
            self._text = []

    def _end(self, name: str) -> None:
        if self._builder is not None:
            self._builder.end(_qname(name))
            self._depth -= 1
            if self._depth == 0:
                self._done.append(_to_response(self._builder.close()))
                self._builder = None
            return
        tag = self._path.pop() if self._path else ""
        if tag == f"{{{DAV}}}sync-token":
            self.sync_token = "".join(self._text).strip()

    def _data(self, text: str) -> None:
        if self._builder is not None:
            self._count(len(text))
            self._builder.data(text)
        elif len(self._text) < 1024:  # text outside entries: only the sync-token is kept
            self._text.append(text)

    def feed(self, data: bytes, final: bool = False) -> list[DavResponse]:
        try:
            self._parser.Parse(data, final)
        except expat.ExpatError as exc:
            raise UnsafeXML(self._host, f"the XML answer does not parse ({exc})") from None
        done, self._done = self._done, []
        return done


async def parse_multistatus(response: httpx2.Response, host: str) -> AsyncIterator[DavResponse]:
    """Yield each `<d:response>` of a streamed 207 body as soon as it is complete."""
    limits = response.request.extensions.get(XML_LIMITS)
    if not isinstance(limits, XmlLimits):
        limits = XmlLimits(8 * 1024 * 1024, 32 * 1024 * 1024, 64)
    parser = MultistatusParser(host, max_entry_bytes=limits.entry_bytes, max_depth=limits.depth)
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
    if parser.root not in (f"{{{DAV}}}multistatus", None):
        raise UnsafeXML(host, f"expected a DAV multistatus, got {parser.root}")


def sabre_message(body: str) -> str | None:
    """The `<s:message>` of a Sabre/Nextcloud error body, if there is one (parsed safely)."""
    if "<" not in body:
        return None
    messages: list[str] = []
    capture: list[bool] = [False]
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse(*args: Any) -> None:
        raise ValueError("DTD")

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.StartElementHandler = lambda name, attrs: capture.__setitem__(0, name.endswith(" message"))
    parser.EndElementHandler = lambda name: capture.__setitem__(0, False)
    parser.CharacterDataHandler = lambda text: messages.append(text) if capture[0] else None
    try:
        parser.Parse(body.encode(), True)
    except (expat.ExpatError, ValueError):
        return None
    text = "".join(messages).strip()
    return text or None
