"""OCR of images and scanned PDF pages with Debian's real tesseract (docs/ADR/0096): words drawn
into an image are found; off by default; a hostile image is refused by its header before anything
decodes it; tesseract dies with the document process at the wall-time bound; a server with OCR on
and no tesseract (or a language without its data) says so at start."""

from __future__ import annotations

import io
import os
import struct
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from nextcloud_mcp_server.config import ConfigError, Settings, load_settings
from nextcloud_mcp_server.index import ocr
from nextcloud_mcp_server.index.extract import Limits, extract_text, format_of
from nextcloud_mcp_server.index.service import FindService

pytestmark = pytest.mark.timeout(120)

FONT = "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"
OCR = Limits(max_bytes=64 * 1024, memory=512 << 20, cpu_seconds=60, seconds=60.0, ocr="eng")


def _drawn(lines: list[str], size: tuple[int, int] = (1400, 400), points: int = 48) -> Image.Image:
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, points)
    for n, line in enumerate(lines):
        draw.text((40, 40 + n * int(points * 1.6)), line, font=font, fill=0)
    return image


def _saved(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


async def test_words_in_images_and_a_scanned_pdf_are_read() -> None:
    image = _drawn(["The boiler warranty", "ends in March"])
    for fmt, data in [
        ("png", _saved(image, "PNG")),
        ("jpeg", _saved(image, "JPEG", quality=90)),
        ("tiff", _saved(image, "TIFF")),
    ]:
        found = await extract_text(fmt, data, OCR)
        assert found.error == "", fmt
        assert "warranty" in found.text.lower(), (fmt, found.text)
    # a scanned letter: a PDF whose page is only an image (no text layer)
    scanned = _saved(_drawn(["Lease terms", "notice period"]), "PDF", resolution=150.0)
    found = await extract_text("pdf", scanned, OCR)
    assert "lease" in found.text.lower(), found.text
    # OCR off (the default): the page has no text to give
    assert (await extract_text("pdf", scanned, Limits())).text.strip() == ""


async def test_images_are_read_only_with_ocr_on() -> None:
    assert format_of("Scan.PNG", None) is None
    assert format_of("photo", "image/jpeg") is None
    assert format_of("Scan.PNG", None, ocr=True) == "png"
    assert format_of("photo", "image/jpeg", ocr=True) == "jpeg"
    assert format_of("fax.tif", None, ocr=True) == "tiff"
    assert format_of("report.pdf", None, ocr=True) == "pdf"
    found = await extract_text("png", _saved(_drawn(["x"]), "PNG"), Limits())
    assert "only with OCR on" in found.error


def _png(width: int, height: int, idat: bytes) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit gray
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def _bomb(side: int) -> bytes:
    """A valid PNG of side x side black pixels: a few hundred KB that inflate to side² bytes."""
    packer = zlib.compressobj(9)
    row = b"\x00" * (side + 1)
    idat = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    return _png(side, side, idat)


def _tiff_pages(pages: int, width: int = 10, height: int = 10) -> bytes:
    """A little-endian TIFF of `pages` IFDs, each naming its width and height (no pixels needed:
    the header is refused before anything is decoded)."""
    out = bytearray(b"II*\x00" + struct.pack("<I", 8))
    for n in range(pages):
        at = len(out)
        following = at + 2 + 2 * 12 + 4 if n < pages - 1 else 0
        out += struct.pack("<H", 2)
        out += struct.pack("<HHII", 256, 4, 1, width) + struct.pack("<HHII", 257, 4, 1, height)
        out += struct.pack("<I", following)
    return bytes(out)


def _jpeg_header(width: int, height: int) -> bytes:
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 4) + b"\x00\x00" + sof + b"\xff\xd9"


@pytest.mark.parametrize(
    ("fmt", "made", "why"),
    [
        ("png", lambda: _bomb(8000), "8000 x 8000 pixels, more than"),  # 64 million pixels in ~60 KB
        ("png", lambda: _png(100_000, 100_000, b""), "more than"),
        ("jpeg", lambda: _jpeg_header(60_000, 60_000), "60000 x 60000"),
        ("tiff", lambda: _tiff_pages(30), "more than 20 pages"),
        ("tiff", lambda: _tiff_pages(1, 50_000, 50_000), "more than"),
        ("png", lambda: b"\x89PNG\r\n\x1a\n" + b"\x00" * 8, "without its header"),
        ("jpeg", lambda: b"\xff\xd8\x00garbage", "markers"),
        ("tiff", lambda: b"II*\x00", "cut short"),  # the header's first four bytes, then nothing
        ("tiff", lambda: b"MM\x00*\x00\x00", "cut short"),
        ("png", lambda: b"GIF89a", "not a PNG"),
    ],
)
async def test_hostile_images_are_refused_by_their_header(
    fmt: str, made: Callable[[], bytes], why: str
) -> None:
    data = made()
    found = await extract_text(fmt, data, Limits(ocr="eng", ocr_pixels=40_000_000, ocr_pages=20))
    assert found.text == ""
    assert why in found.error


def _tesseracts() -> set[int]:
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if Path(f"/proc/{name}/comm").read_text().strip() == "tesseract":
                    found.add(int(name))
            except OSError:
                continue
    return found


async def test_tesseract_dies_with_the_document_at_the_wall_time_bound() -> None:
    """A page full of text takes tesseract seconds; at the bound the document process and
    tesseract, its child, are both killed (one process group)."""
    before = _tesseracts()
    page = _drawn(
        [f"line {n} of a long scanned letter about boilers and leases" for n in range(60)], (2480, 3508), 40
    )
    found = await extract_text("png", _saved(page, "PNG"), Limits(ocr="eng", seconds=1.0, cpu_seconds=60))
    assert "longer than 1 s" in found.error
    deadline = time.monotonic() + 10
    while _tesseracts() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _tesseracts() - before


def _settings(tmp_path: Path, **find: object) -> Settings:
    return load_settings(
        env_file=None,
        nextcloud_host="https://cloud.example.com",
        nextcloud_username="admin",
        nextcloud_password="pw",
        store_path=tmp_path / "store.sqlite3",
        **find,
    )


def test_ocr_on_without_tesseract_or_a_language_is_refused_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    FindService(_settings(tmp_path, find_ocr=True))  # tesseract and English: ready
    FindService(_settings(tmp_path, find_ocr_languages="xyz"))  # OCR off: nothing checked
    with pytest.raises(ConfigError) as refused:
        FindService(_settings(tmp_path, find_ocr=True, find_ocr_languages="eng+xyz"))
    assert "xyz" in str(refused.value)
    assert "tesseract-ocr-xyz" in str(refused.value)
    monkeypatch.setattr(ocr, "TESSERACT", "tesseract-not-installed")
    with pytest.raises(ConfigError) as missing:
        FindService(_settings(tmp_path, find_ocr=True))
    assert "tesseract is not installed" in str(missing.value)
