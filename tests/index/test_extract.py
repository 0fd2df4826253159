"""Documents' text through the bounded worker (docs/ADR/0075): every format read, and every
hostile document stopped by a bound while the server's process goes on."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from nextcloud_mcp_server.index.extract import WORKER, Limits, extract_text, format_of
from tests.index import documents

pytestmark = pytest.mark.timeout(120)

LIMITS = Limits(max_bytes=64 * 1024, max_pages=50, memory=512 << 20, cpu_seconds=20, seconds=60.0)


@pytest.mark.parametrize(
    ("fmt", "data", "words"),
    [
        ("pdf", documents.pdf(["the boiler warranty", "lease terms (page two)"]), ["boiler", "lease"]),
        (
            "docx",
            documents.docx(["Quarterly narwhal", "Café crème & <tags>"]),
            ["narwhal", "Café crème & <tags>"],
        ),
        ("xlsx", documents.xlsx([["ledger", "zanzibar"], ["42"]]), ["zanzibar", "42"]),
        ("pptx", documents.pptx(["first slide", "second okapi"]), ["okapi", "first slide"]),
        ("odt", documents.odt(["Ein Absatz über Äpfel", "pangolin"]), ["über Äpfel", "pangolin"]),
        ("ods", documents.ods([["quokka", "7"]]), ["quokka"]),
        ("odp", documents.odp(["axolotl slide"]), ["axolotl"]),
    ],
)
async def test_each_format_gives_its_text(fmt: str, data: bytes, words: list[str]) -> None:
    found = await extract_text(fmt, data, LIMITS)
    assert found.error == ""
    for word in words:
        assert word in found.text


async def test_a_pdf_is_read_up_to_max_pages() -> None:
    data = documents.pdf([f"page{i}word" for i in range(6)])
    found = await extract_text("pdf", data, Limits(max_pages=2))
    assert "page1word" in found.text
    assert "page2word" not in found.text


async def test_text_is_cut_at_max_bytes_on_a_character_boundary() -> None:
    data = documents.odt(["é" * 5000])
    found = await extract_text("odt", data, Limits(max_bytes=1001))
    assert found.error == ""
    assert found.text == "é" * 500


@pytest.mark.parametrize(
    ("fmt", "data", "why"),
    [
        ("docx", documents.entity_bomb_docx(), "DOCTYPE"),
        ("docx", documents.deep_docx(), "nested too deep"),
        ("docx", documents.zip_bomb_docx(96 << 20), "bytes of XML"),
        ("pdf", b"%PDF-1.7\n" + bytes(range(256)) * 64, "not a PDF"),
        ("docx", b"PK\x03\x04 not a zip at all", "not a zip"),
        ("odt", documents.docx(["a docx named .odt"]), "none of the format's parts"),
        # zipfile inflates bzip2 without a bound per read: 3 KB grew to the memory limit
        ("docx", documents.bzip2_docx(["a pelican"]), "compressed in a way office documents are not"),
    ],
)
async def test_hostile_documents_are_refused(fmt: str, data: bytes, why: str) -> None:
    found = await extract_text(fmt, data, LIMITS)
    assert found.text == ""
    assert why in found.error


async def test_a_page_a_pdf_miscounts_is_skipped_and_the_others_read() -> None:
    """The tree says three pages, there are two: loading the third raised, and the whole text
    was lost (the file found by its name only)."""
    found = await extract_text("pdf", documents.miscounted_pdf(), LIMITS)
    assert found.error == ""
    assert "first pelican" in found.text
    assert "second pelican" in found.text


async def test_a_looping_pdf_ends() -> None:
    found = await extract_text("pdf", documents.looping_pdf(), LIMITS)
    assert found.error == "" or "not a PDF" in found.error


def _script(tmp_path: Path, body: str) -> Path:
    """A worker that limits itself as the real one does, then misbehaves."""
    script = tmp_path / "worker.py"
    script.write_text(
        f"import sys\nsys.path.insert(0, {str(WORKER.parent)!r})\n"
        "from extract_worker import limit_self\n"
        "limit_self(int(sys.argv[4]), int(sys.argv[5]))\n" + body
    )
    return script


async def test_a_parser_over_its_memory_is_stopped(tmp_path: Path) -> None:
    worker = _script(tmp_path, "hoard = bytearray(1 << 30)\nprint('not reached')\n")
    found = await extract_text("pdf", b"x", Limits(memory=256 << 20), worker=worker)
    assert found.text == ""
    assert "over the parser's limits" in found.error


async def test_a_parser_over_its_cpu_seconds_is_killed(tmp_path: Path) -> None:
    worker = _script(tmp_path, "while True:\n    pass\n")
    found = await extract_text("pdf", b"x", Limits(cpu_seconds=1, seconds=60.0), worker=worker)
    assert "over the parser's limits" in found.error


async def test_a_parser_over_its_wall_time_is_killed(tmp_path: Path) -> None:
    worker = _script(tmp_path, "import time\ntime.sleep(600)\n")
    found = await extract_text("pdf", b"x", Limits(seconds=0.5), worker=worker)
    assert "longer than 0.5 s" in found.error


def _running(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                    found.append(int(name))
            except OSError:
                continue
    return found


async def test_what_a_parser_started_is_killed_with_it(tmp_path: Path) -> None:
    """At the wall-time bound the parser's whole process group is killed: a program it started
    (tesseract, docs/ADR/0096) never runs on after it (here a `sleep` named by a marker)."""
    marker = f"600.{os.getpid()}{tmp_path.name[-6:].replace('_', '')}"
    worker = _script(
        tmp_path, f"import subprocess, time\nsubprocess.Popen(['sleep', '{marker}'])\ntime.sleep(600)\n"
    )
    found = await extract_text("pdf", b"x", Limits(seconds=1.0), worker=worker)
    assert "longer than 1 s" in found.error
    deadline = time.monotonic() + 10
    while _running(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert _running(marker) == []


async def test_a_parser_writing_too_much_is_ignored(tmp_path: Path) -> None:
    worker = _script(tmp_path, "sys.stdout.write('y' * 100_000)\n")
    found = await extract_text("pdf", b"x", Limits(max_bytes=1000), worker=worker)
    assert found.text == ""
    assert "more text than allowed" in found.error


async def test_the_worker_gets_no_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEXTCLOUD_PASSWORD", "secret-in-env")
    worker = _script(tmp_path, "import os\nsys.stdout.write(repr(sorted(os.environ)))\n")
    found = await extract_text("pdf", b"x", LIMITS, worker=worker)
    assert "NEXTCLOUD_PASSWORD" not in found.text
    assert sys.executable  # the worker ran with this interpreter
    assert found.error == ""


def test_formats_by_name_and_mime() -> None:
    assert format_of("Report.PDF", None) == "pdf"
    assert format_of("letter", "application/vnd.oasis.opendocument.text; charset=x") == "odt"
    assert format_of("notes.md", "text/markdown") is None
