"""Text of images and scanned PDF pages by Debian's tesseract, bounded (docs/ADR/0096).

Used in the document process (`extract_worker.py` loads this file by its path: only the standard
library here) and, for the start-up check, by the server. An image's size is read from its own
header before anything decodes it: more pixels than allowed (a decompression bomb, a huge scan)
or more pages than allowed (a multi-page TIFF) is refused unread. tesseract then runs as a child
of the document process, inheriting its limits on memory and CPU, on one thread, reading the
image from its stdin and writing text to its stdout; the server kills the whole process group at
its wall-time bound.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from collections.abc import Sequence

__all__ = ["OcrRefused", "image_sizes", "missing", "pgm", "recognise"]

TESSERACT = "tesseract"
_JPEG_SIZES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
MAX_TIFF_PAGES = 10_000  # IFDs followed at most, whatever the limit asked (a loop of IFDs ends too)


class OcrRefused(Exception):
    """Not an image we read, or over a bound; said in words."""


def _png(data: bytes) -> list[tuple[int, int]]:
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise OcrRefused("a PNG without its header")
    width, height = struct.unpack(">II", data[16:24])
    return [(width, height)]


def _jpeg(data: bytes) -> list[tuple[int, int]]:
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            raise OcrRefused("a JPEG whose markers do not follow each other")
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _JPEG_SIZES:
            if at + 9 > len(data):
                break
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return [(width, height)]
        if length < 2:
            raise OcrRefused("a JPEG with a malformed segment")
        at += 2 + length
    raise OcrRefused("a JPEG without its size")


def _tiff(data: bytes, max_pages: int) -> list[tuple[int, int]]:
    order = "<" if data[:2] == b"II" else ">"
    if len(data) < 8:
        raise OcrRefused("a TIFF cut short")
    (offset,) = struct.unpack(order + "I", data[4:8])
    sizes: list[tuple[int, int]] = []
    seen: set[int] = set()
    while offset and len(sizes) < MAX_TIFF_PAGES:
        if offset in seen or offset + 2 > len(data):
            break
        seen.add(offset)
        (count,) = struct.unpack(order + "H", data[offset : offset + 2])
        width = height = 0
        for n in range(count):
            entry = offset + 2 + 12 * n
            if entry + 12 > len(data):
                raise OcrRefused("a TIFF cut short")
            tag, kind = struct.unpack(order + "HH", data[entry : entry + 4])
            if tag in (256, 257):
                fmt = order + ("H" if kind == 3 else "I")
                size = 2 if kind == 3 else 4
                (value,) = struct.unpack(fmt, data[entry + 8 : entry + 8 + size])
                width, height = (value, height) if tag == 256 else (width, value)
        sizes.append((width, height))
        if len(sizes) > max_pages:
            raise OcrRefused(f"a TIFF of more than {max_pages} pages")
        next_at = offset + 2 + 12 * count
        if next_at + 4 > len(data):
            break
        (offset,) = struct.unpack(order + "I", data[next_at : next_at + 4])
    if not sizes:
        raise OcrRefused("a TIFF without an image")
    return sizes


def image_sizes(fmt: str, data: bytes, *, max_pixels: int, max_pages: int) -> list[tuple[int, int]]:
    """Each page's (width, height) read from the image's header; refused when a page has more
    than `max_pixels` or none, or there are more than `max_pages` pages."""
    if fmt == "png" and data.startswith(b"\x89PNG\r\n\x1a\n"):
        sizes = _png(data)
    elif fmt == "jpeg" and data.startswith(b"\xff\xd8"):
        sizes = _jpeg(data)
    elif fmt == "tiff" and data[:4] in (b"II*\x00", b"MM\x00*"):
        sizes = _tiff(data, max_pages)
    else:
        raise OcrRefused(f"not a {fmt.upper()} image")
    for width, height in sizes:
        if width <= 0 or height <= 0:
            raise OcrRefused("an image without a size")
        if width * height > max_pixels:
            raise OcrRefused(f"an image of {width} x {height} pixels, more than {max_pixels} allowed")
    return sizes


def pgm(width: int, height: int, stride: int, gray: bytes) -> bytes:
    """A binary PGM of 8-bit gray rows (`stride` bytes apart), which tesseract reads."""
    rows = b"".join(gray[y * stride : y * stride + width] for y in range(height))
    return f"P5\n{width} {height}\n255\n".encode() + rows


def recognise(image: bytes, languages: str, *, max_bytes: int) -> str:
    """The text tesseract reads in `image` (any format it reads), at most `max_bytes` of it.
    Runs in the document process: tesseract inherits its limits; the server's wall-time bound
    kills both (one process group)."""
    run = subprocess.run(  # noqa: S603 - a fixed program, the languages checked at start
        [TESSERACT, "stdin", "stdout", "-l", languages, "--psm", "3"],
        input=image,
        capture_output=True,
        env={"OMP_THREAD_LIMIT": "1", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    if run.returncode != 0:
        last = run.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise OcrRefused(f"tesseract failed (exit {run.returncode}{': ' + last[0][:200] if last else ''})")
    return run.stdout[:max_bytes].decode("utf-8", "ignore")


def missing(languages: Sequence[str]) -> str | None:
    """What stops OCR here (no tesseract, a language without its data), or None when ready."""
    program = shutil.which(TESSERACT, path="/usr/bin:/bin:/usr/local/bin")
    if program is None:
        return (
            "FIND_OCR is on but tesseract is not installed "
            "(Debian: apt-get install tesseract-ocr tesseract-ocr-eng)"
        )
    try:
        listed = subprocess.run(  # noqa: S603 - the program found above, fixed arguments
            [program, "--list-langs"], capture_output=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"FIND_OCR is on but tesseract does not run: {exc}"
    have = set(listed.stdout.decode("utf-8", "replace").split())
    absent = [x for x in languages if x not in have]
    if absent:
        packages = " ".join(f"tesseract-ocr-{x.replace('_', '-').lower()}" for x in absent)
        names = ", ".join(absent)
        return f"FIND_OCR_LANGUAGES names {names}, which tesseract lacks (Debian: apt-get install {packages})"
    return None
