"""A document's text for the find index: PDF, OOXML and ODF read in a bounded process of their own
(docs/ADR/0075).

Each document goes to a new `python -I extract_worker.py` that limits its own address space, CPU
seconds and file writes before reading it; this side feeds it at most the document's bytes, reads
at most `max_bytes` back, and kills it after `seconds` of wall time. A hostile document (a zip
bomb, nested entities, a looping or huge PDF) costs one killed process and is then found by its
name only. A process-wide semaphore bounds how many run at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import weakref
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FORMATS", "Extracted", "Limits", "extract_text", "format_of"]

WORKER = Path(__file__).with_name("extract_worker.py")
FORMATS = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".pptx": "pptx",
    ".odt": "odt",
    ".ods": "ods",
    ".odp": "odp",
}
MIMES = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
}
# read only with OCR on (docs/ADR/0096)
IMAGES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".tif": "tiff", ".tiff": "tiff"}
IMAGE_MIMES = {"image/png": "png", "image/jpeg": "jpeg", "image/tiff": "tiff"}
PARALLEL = 2  # documents parsed at once per event loop (the process's one, in the server)
_running: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 256 * 1024  # text kept
    max_file_bytes: int = 32 * 1024 * 1024  # larger documents are not read
    max_pages: int = 500  # of a PDF
    memory: int = 512 * 1024 * 1024  # address space of the parsing process
    cpu_seconds: int = 10
    seconds: float = 20.0  # wall time, then killed
    ocr: str = ""  # tesseract's languages ("eng+deu"); "": no OCR (docs/ADR/0096)
    ocr_pixels: int = 40_000_000  # an image's or a rendered page's pixels at most
    ocr_pages: int = 20  # pages read by OCR per document at most (scanned PDF pages, TIFF pages)


@dataclass(frozen=True)
class Extracted:
    text: str
    error: str = ""  # why there is no text ("" when there is)


def format_of(name: str, mime: str | None, *, ocr: bool = False) -> str | None:
    """The format the worker reads a file as, by its name or else its MIME type; None: none.
    Images only with `ocr`."""
    suffix = Path(name.lower()).suffix
    bare = (mime or "").split(";")[0].strip()
    if suffix in FORMATS:
        return FORMATS[suffix]
    if ocr and (suffix in IMAGES or bare in IMAGE_MIMES):
        return IMAGES.get(suffix) or IMAGE_MIMES[bare]
    return MIMES.get(bare)


async def _read_bounded(stream: asyncio.StreamReader, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of `stream` until its end; True when it had more."""
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(65536):
        size += len(chunk)
        if size > limit:
            return b"".join(chunks), True
        chunks.append(chunk)
    return b"".join(chunks), False


async def _run(fmt: str, data: bytes, limits: Limits, worker: Path) -> Extracted:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",  # isolated: no environment variables, user site or working directory in the path
        str(worker),
        fmt,
        str(limits.max_bytes),
        str(limits.max_pages),
        str(limits.memory),
        str(limits.cpu_seconds),
        limits.ocr or "-",
        str(limits.ocr_pixels),
        str(limits.ocr_pages),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={},
        close_fds=True,
        start_new_session=True,  # its own process group: tesseract, its child, is killed with it
    )
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
    if stdin is None or stdout is None or stderr is None:  # never with PIPE; for the type checker
        raise RuntimeError("the extraction process has no pipes")

    async def feed() -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin.write(data)
            await stdin.drain()
        stdin.close()

    async def talk() -> tuple[tuple[bytes, bool], tuple[bytes, bool], int]:
        _, out, err = await asyncio.gather(
            feed(), _read_bounded(stdout, limits.max_bytes), _read_bounded(stderr, 2000)
        )
        return out, err, await process.wait()

    try:
        (out, too_much), (err, _), code = await asyncio.wait_for(talk(), limits.seconds)
    except TimeoutError:
        return Extracted("", f"took longer than {limits.seconds:g} s, stopped")
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # what it started too, whether it ended or not
        if process.returncode is None:
            await process.wait()
    if too_much:
        return Extracted("", "wrote more text than allowed, ignored")
    if code == 0:
        return Extracted(out.decode("utf-8", "replace"))
    if code == 3:
        return Extracted("", err.decode("utf-8", "replace").strip() or "not readable")
    if code < 0 or code == 4 or b"MemoryError" in err:
        return Extracted(
            "",
            f"over the parser's limits (memory {limits.memory >> 20} MiB, "
            f"CPU {limits.cpu_seconds} s), stopped",
        )
    last = err.decode("utf-8", "replace").strip().splitlines()[-1:]
    return Extracted("", f"the parser failed (exit {code}{': ' + last[0][:200] if last else ''})")


async def extract_text(fmt: str, data: bytes, limits: Limits, *, worker: Path = WORKER) -> Extracted:
    """The text of a document of format `fmt` (a value of FORMATS), or why there is none.
    (`worker` is another program speaking the worker's protocol only in the tests of the bounds.)"""
    loop = asyncio.get_running_loop()
    slots = _running.setdefault(loop, asyncio.Semaphore(PARALLEL))
    async with slots:
        return await _run(fmt, data, limits, worker)
