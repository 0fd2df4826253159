"""A message's source turned into what a reader needs, treating every byte as hostile.

The source is parsed by the standard library's `email` package (RFC 5322/MIME, lenient with
malformed input), within bounds: at most `MAX_SOURCE_BYTES` of it are parsed (a longer message is
cut there and says so), MIME is followed `MAX_DEPTH` levels deep and over `MAX_PARTS` parts, and
the text answered is at most the reader's `max_chars`. The body is the first text/plain part, or
else the first text/html part turned into text by `html_text` (a flat parser: no tree is built, so
nesting costs nothing; scripts, styles and comments are dropped, never run). Attachments are listed
by name, type and size, never fetched. Characters that hide or reorder text are shown as
`⟦U+202E⟧` (as in approval questions), so a model cannot be steered by text a human cannot see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email import policy
from email.message import Message
from email.parser import BytesParser
from html.parser import HTMLParser

from nextcloud_mcp_server.nextcloud.names import named_hidden as visible

__all__ = [
    "MAX_DEPTH",
    "MAX_PARTS",
    "MAX_SOURCE_BYTES",
    "Attachment",
    "ReadMessage",
    "html_text",
    "read_source",
]

MAX_SOURCE_BYTES = 1024 * 1024  # parsed of one message's source
MAX_DEPTH = 12  # MIME levels followed
MAX_PARTS = 200  # MIME parts looked at
MAX_ATTACHMENTS = 50  # listed
MAX_HTML = 400_000  # characters of HTML read (markup included); beyond, the text is cut
# multipart declarations in one source: the parser's cost grows with nesting (recursion, quadratic
# time), so a source with more is read as headers and a note, never parsed as MIME
MAX_MULTIPARTS = 64
_MULTIPART = re.compile(rb"multipart/", re.IGNORECASE)
_BLANKS = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")
_SPACES = re.compile(r"[ \t\r\f\v]+")
_BLOCKS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "fieldset"),
        *("figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header"),
        *("hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul"),
    }
)
_DROPPED = frozenset({"script", "style", "head", "title", "template", "noscript", "svg", "math"})


class _Text(HTMLParser):
    def __init__(self, limit: int) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.dropped = 0  # depth inside elements whose text is not shown
        self.newlines = 0  # line breaks in a row at the end

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED:
            self.dropped += 1
        elif tag in _BLOCKS:
            self._add("\n")
        elif tag == "img":
            alt = next((v for k, v in attrs if k == "alt" and v), None)
            if alt:
                self._add(f"[image: {alt[:100]}]")

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED:
            self.dropped = max(0, self.dropped - 1)
        elif tag in _BLOCKS:
            self._add("\n")

    def handle_data(self, data: str) -> None:
        if not self.dropped:
            self._add(_SPACES.sub(" ", data.replace("\n", " ")))

    def _add(self, text: str) -> None:
        if text == "\n":  # at most one blank line in a row, so empty blocks cost nothing
            if self.newlines >= 2:
                return
            self.newlines += 1
        elif text.strip():
            self.newlines = 0
        if self.size < self.limit:
            self.parts.append(text)
            self.size += len(text)


def html_text(html: str, limit: int = 200_000) -> str:
    """The text a reader sees of `html` (at most about `limit` characters), without markup."""
    parser = _Text(limit)
    for start in range(0, min(len(html), MAX_HTML), 65_536):
        try:
            parser.feed(html[start : min(start + 65_536, MAX_HTML)])
        except AssertionError:  # Python 3.11's parser asserts on `<![ ]]>`: keep what was read
            break
        if parser.size >= limit:
            break
    # not close(): it would answer a tag cut at the bound as text
    lines = (line.strip() for line in "".join(parser.parts).split("\n"))
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()


@dataclass(frozen=True)
class Attachment:
    name: str
    content_type: str
    size: int  # bytes of its content as sent (encoded)


@dataclass
class ReadMessage:
    body: str
    body_format: str  # "plain", "html" (converted to text) or "none"
    truncated: bool  # the body is longer than what is answered
    attachments: list[Attachment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was cut or not followed


def _walk(message: Message, depth: int, found: list[tuple[Message, int]], notes: list[str]) -> None:
    if len(found) >= MAX_PARTS:
        if "parts" not in notes:
            notes.append("parts")
        return
    found.append((message, depth))
    if not message.is_multipart():
        return
    if depth >= MAX_DEPTH:
        if "depth" not in notes:
            notes.append("depth")
        return
    payload = message.get_payload()
    for part in payload if isinstance(payload, list) else ():
        if isinstance(part, Message):
            _walk(part, depth + 1, found, notes)


def _text_of(part: Message) -> str:
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes):
        return ""
    charset = part.get_content_charset() or "utf-8"
    try:
        return raw.decode(charset, errors="replace")
    except (LookupError, UnicodeError):  # an unknown charset, or one that is no text codec (idna)
        return raw.decode("utf-8", errors="replace")


def read_source(source: bytes, max_chars: int) -> ReadMessage:
    """The body (at most `max_chars` characters) and attachments of a message's source."""
    notes: list[str] = []
    if len(source) > MAX_SOURCE_BYTES:
        source = source[:MAX_SOURCE_BYTES]
        notes.append(f"the message is larger than {MAX_SOURCE_BYTES:,} bytes; only its start was read")
    if len(_MULTIPART.findall(source, 0, len(source))) > MAX_MULTIPARTS:
        notes.append(f"the message has more than {MAX_MULTIPARTS} multipart sections; its body was not read")
        return ReadMessage("", "none", False, notes=notes)
    try:
        message: Message = BytesParser(policy=policy.compat32).parsebytes(source)
    except RecursionError:  # a parser that recursed on nesting: read nothing rather than fail
        return ReadMessage("", "none", False, notes=[*notes, "the message's structure is too deep to read"])
    parts: list[tuple[Message, int]] = []
    limits: list[str] = []
    _walk(message, 0, parts, limits)
    if "depth" in limits:
        notes.append(f"parts nested deeper than {MAX_DEPTH} levels were not read")
    if "parts" in limits:
        notes.append(f"only the first {MAX_PARTS} parts were read")
    plain: Message | None = None
    html: Message | None = None
    attachments: list[Attachment] = []
    for part, _depth in parts:
        if part.is_multipart():
            continue
        kind = part.get_content_type()
        disposition = (part.get("Content-Disposition") or "").split(";")[0].strip().lower()
        name = part.get_filename()
        if disposition == "attachment" or name or not kind.startswith("text/"):
            if len(attachments) < MAX_ATTACHMENTS:
                payload = part.get_payload()
                size = len(payload) if isinstance(payload, str) else 0
                attachments.append(Attachment(visible(str(name or "(no name)"))[:200], kind[:100], size))
            continue
        if kind == "text/plain" and plain is None:
            plain = part
        elif kind == "text/html" and html is None:
            html = part
    if plain is not None:
        text, form = _text_of(plain).replace("\r\n", "\n"), "plain"
    elif html is not None:
        text, form = html_text(_text_of(html), max_chars * 2), "html"
    else:
        text, form = "", "none"
    text = visible(text.strip())
    return ReadMessage(text[:max_chars], form, len(text) > max_chars, attachments, notes)
