"""The text of one document, in a process of its own with hard limits (docs/ADR/0075).

Run by `extract.py` as `python -I extract_worker.py FORMAT MAX_BYTES MAX_PAGES MEMORY CPU
[OCR_LANGUAGES MAX_PIXELS OCR_PAGES]`: it
limits its own address space, CPU seconds and file writes *before* it reads the document from
stdin, then writes at most MAX_BYTES of UTF-8 text to stdout. Exit 0: the text; exit 3: the
document is not of its format or refused (why on stderr); killed (SIGKILL, SIGXCPU) or MemoryError:
over a limit. The parent also kills it after a wall time.

Only the standard library is imported here, and pypdfium2 for PDF (after the limits are set), so
that a process starts in a few tens of milliseconds and nothing of the server is in it.

- PDF: PDFium (pypdfium2), the first MAX_PAGES pages; with OCR_LANGUAGES (not "-"), a page with
  no text layer is rendered in gray (at most MAX_PIXELS) and read by tesseract, OCR_PAGES at most.
- PNG, JPEG, TIFF (OCR only): tesseract, after the header's size is checked (`ocr.py`, ADR 0096).
- OOXML (docx, xlsx, pptx) and ODF (odt, ods, odp): the zip's members read through `zipfile`
  with every read bounded (a member's declared size is never trusted: a zip bomb inflates only
  as far as the bound), their XML walked by expat in chunks with any DOCTYPE refused (no entity
  can be declared, so no billion laughs and no external entity).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import re
import resource
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import IO
from xml.parsers import expat

MAX_MEMBERS = 5000  # entries in a zip's directory; more: refused
MAX_XML_BYTES = 64 * 1024 * 1024  # inflated XML read per document, in all
MAX_DEPTH = 256  # XML elements open at once
CHUNK = 64 * 1024

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
TEXT_NS = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE_NS = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
OFFICE_NS = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
DRAW_NS = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
IMAGES = ("png", "jpeg", "tiff")
OCR_DPI = 300  # a scanned page is rendered at this resolution, unless that is over MAX_PIXELS
SCANNED_BELOW = 16  # a PDF page with fewer non-space characters of text is taken as scanned


class Refused(Exception):
    """The document is not of its format, or breaks a limit we check ourselves."""


class Ocr:
    """What OCR may do in this process (languages "" : none)."""

    def __init__(self, languages: str, max_pixels: int, pages: int) -> None:
        self.languages = languages
        self.max_pixels = max_pixels
        self.pages = pages

    def module(self) -> ModuleType:
        """`ocr.py` beside this file, loaded by its path (`-I` keeps this folder off the path)."""
        spec = importlib.util.spec_from_file_location("find_ocr", Path(__file__).with_name("ocr.py"))
        if spec is None or spec.loader is None:
            raise Refused("OCR is not available")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


NO_OCR = Ocr("", 0, 0)


class Output:
    """Text gathered up to a byte budget; `full` once it is reached."""

    def __init__(self, max_bytes: int) -> None:
        self.parts: list[str] = []
        self.left = max_bytes

    @property
    def full(self) -> bool:
        return self.left <= 0

    def add(self, text: str) -> None:
        if self.left <= 0 or not text:
            return
        data = text.encode("utf-8", "replace")
        if len(data) > self.left:
            data = data[: self.left]
            text = data.decode("utf-8", "ignore")
        self.parts.append(text)
        self.left -= len(data)

    def text(self) -> str:
        return "".join(self.parts)


class XmlBudget:
    def __init__(self) -> None:
        self.left = MAX_XML_BYTES


def _refuse_doctype(*_: object) -> None:
    raise Refused("a DOCTYPE in a document's XML")


def walk_xml(
    stream: IO[bytes],
    out: Output,
    budget: XmlBudget,
    keep: Callable[[str], bool],
    breaks: dict[str, str],
) -> None:
    """Character data inside elements for which `keep(name)` holds (or below one) goes to `out`;
    `breaks` maps an element to the text it stands for (a paragraph's end, a tab)."""
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.StartDoctypeDeclHandler = _refuse_doctype
    parser.EntityDeclHandler = _refuse_doctype
    parser.ExternalEntityRefHandler = _refuse_doctype  # type: ignore[assignment]
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    inside = [0]  # how many kept elements are open
    depth = [0]

    def start(name: str, _attrs: object) -> None:
        depth[0] += 1
        if depth[0] > MAX_DEPTH:
            raise Refused("XML nested too deep")
        if keep(name) or inside[0]:
            inside[0] += 1

    def end(name: str) -> None:
        depth[0] -= 1
        if inside[0]:
            inside[0] -= 1
        mark = breaks.get(name)
        if mark:
            out.add(mark)

    def chars(data: str) -> None:
        if inside[0]:
            out.add(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    while not out.full:
        want = min(CHUNK, budget.left)
        if want <= 0:
            raise Refused(f"more than {MAX_XML_BYTES} bytes of XML")
        data = stream.read(want)
        budget.left -= len(data)
        if not data:
            parser.Parse(b"", True)
            return
        parser.Parse(data, False)


def _members(archive: zipfile.ZipFile, pattern: str) -> list[str]:
    wanted = re.compile(pattern)

    def order(name: str) -> tuple[str, int]:
        number = re.search(r"([0-9]{1,9})\.xml$", name)  # int() of 5,000 digits would raise
        return (re.sub(r"\d+\.xml$", "", name), int(number.group(1)) if number else 0)

    return sorted((n for n in archive.namelist() if wanted.fullmatch(n)), key=order)


def _zip(data: bytes) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise Refused(f"not a zip: {exc}") from None
    if len(archive.infolist()) > MAX_MEMBERS:
        raise Refused(f"more than {MAX_MEMBERS} entries in the zip")
    return archive


def _walk_members(
    data: bytes, out: Output, pattern: str, keep: Callable[[str], bool], breaks: dict[str, str]
) -> None:
    archive = _zip(data)
    budget = XmlBudget()
    names = _members(archive, pattern)
    if not names:
        raise Refused("none of the format's parts in the zip")
    for name in names:
        if out.full:
            return
        if archive.getinfo(name).compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            # office formats use only these; zipfile inflates bzip2 and LZMA without a bound per
            # read, so 3 KB of bzip2 grew to the memory limit before the XML budget could count
            raise Refused(f"{name} is compressed in a way office documents are not")
        with archive.open(name) as member:
            walk_xml(member, out, budget, keep, breaks)
        out.add("\n")


def ooxml(data: bytes, out: Output, kind: str) -> None:
    if kind == "docx":
        pattern = r"word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml"
        names = {f"{W} t", f"{W} delText"}
        breaks = {f"{W} p": "\n", f"{W} tab": "\t", f"{W} br": "\n", f"{W} tc": "\t"}
    elif kind == "pptx":
        pattern = r"ppt/(slides/slide|notesSlides/notesSlide)\d+\.xml"
        names = {f"{A} t"}
        breaks = {f"{A} p": "\n", f"{A} br": "\n"}
    else:  # xlsx: the shared strings, then inline strings and values of each sheet
        pattern = r"xl/(sharedStrings|worksheets/sheet\d+)\.xml"
        names = {f"{S} t", f"{S} v"}
        breaks = {f"{S} si": "\n", f"{S} c": "\t", f"{S} row": "\n"}
    _walk_members(data, out, pattern, names.__contains__, breaks)


def odf(data: bytes, out: Output) -> None:
    body = {f"{OFFICE_NS} body"}
    breaks = {
        f"{TEXT_NS} p": "\n",
        f"{TEXT_NS} h": "\n",
        f"{TEXT_NS} tab": "\t",
        f"{TEXT_NS} s": " ",
        f"{TEXT_NS} line-break": "\n",
        f"{TABLE_NS} table-cell": "\t",
        f"{DRAW_NS} frame": "\n",
    }
    _walk_members(data, out, r"content\.xml", body.__contains__, breaks)


def _scanned(page: object, out: Output, ocr: Ocr, reader: ModuleType) -> None:
    """A page without text, rendered in gray and read by tesseract (at most `max_pixels`)."""
    width, height = page.get_size()  # type: ignore[attr-defined]  # points
    if width <= 0 or height <= 0:
        return
    scale = min(OCR_DPI / 72, math.sqrt(ocr.max_pixels / (width * height)))
    bitmap = page.render(scale=scale, grayscale=True)  # type: ignore[attr-defined]
    try:
        image = reader.pgm(bitmap.width, bitmap.height, bitmap.stride, bytes(bitmap.buffer))
    finally:
        bitmap.close()
    out.add(reader.recognise(image, ocr.languages, max_bytes=max(out.left, 0)))


def pdf(data: bytes, out: Output, max_pages: int, ocr: Ocr = NO_OCR) -> None:
    import pypdfium2 as pdfium  # after the limits: PDFium is native code reading hostile input

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise Refused(f"not a PDF PDFium can open: {exc}") from None
    reader = ocr.module() if ocr.languages else None
    read = 0  # pages read by OCR
    for number in range(min(len(document), max_pages)):
        if out.full:
            break
        try:  # a page tree that counts one page too many, or names a non-page: that page is skipped
            page = document[number]
            textpage = page.get_textpage()
            text = textpage.get_text_range()
            textpage.close()
        except pdfium.PdfiumError:
            continue
        if reader is not None and len("".join(text.split())) < SCANNED_BELOW and read < ocr.pages:
            read += 1
            with contextlib.suppress(reader.OcrRefused):  # that page stays without text
                _scanned(page, out, ocr, reader)
        else:
            out.add(text)
        out.add("\n\n")  # a page ends a paragraph: passages never span two pages
        page.close()
    document.close()


def image(fmt: str, data: bytes, out: Output, ocr: Ocr) -> None:
    if not ocr.languages:
        raise Refused("images are read only with OCR on")
    reader = ocr.module()
    try:
        reader.image_sizes(fmt, data, max_pixels=ocr.max_pixels, max_pages=ocr.pages)
        out.add(reader.recognise(data, ocr.languages, max_bytes=out.left))
    except reader.OcrRefused as exc:
        raise Refused(str(exc)) from None


def extract(fmt: str, data: bytes, max_bytes: int, max_pages: int, ocr: Ocr = NO_OCR) -> str:
    out = Output(max_bytes)
    if fmt == "pdf":
        pdf(data, out, max_pages, ocr)
    elif fmt in ("docx", "xlsx", "pptx"):
        ooxml(data, out, fmt)
    elif fmt in ("odt", "ods", "odp"):
        odf(data, out)
    elif fmt in IMAGES:
        image(fmt, data, out, ocr)
    else:
        raise Refused(f"unknown format {fmt!r}")
    return out.text()


def limit_self(memory: int, cpu_seconds: int) -> None:
    """Hard limits on this process, set before anything hostile is read."""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # writes no file
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _read_all(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(1 << 20):
        yield chunk


def main(argv: list[str]) -> int:
    fmt, max_bytes, max_pages, memory, cpu = argv[1], int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5])
    ocr = Ocr(argv[6].strip("-"), int(argv[7]), int(argv[8])) if len(argv) > 8 else NO_OCR
    limit_self(memory, cpu)
    data = b"".join(_read_all(sys.stdin.buffer))
    try:
        text = extract(fmt, data, max_bytes, max_pages, ocr)
    except Refused as exc:
        sys.stderr.write(str(exc)[:500])
        return 3
    except (expat.ExpatError, zipfile.BadZipFile, EOFError, OSError, KeyError, ValueError) as exc:
        sys.stderr.write(f"malformed: {type(exc).__name__}: {exc}"[:500])
        return 3
    except MemoryError:
        sys.stderr.write("over the memory limit")
        return 4
    sys.stdout.buffer.write(text.encode("utf-8", "replace")[:max_bytes])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
