"""Document text extraction candidates side by side (docs/ADR/0075): time per document, peak
memory, and what each does with hostile documents, for PDF (pypdfium2, pypdf, pdfminer.six),
DOCX (our bounded zip+expat walk, python-docx), XLSX (ours, openpyxl) and ODT (ours, odfpy); and
the whole path the server takes (a bounded worker process per document, `extract.py`).

Documents are built in code (tests/index/documents.py): PDFs of 10 pages of 40 lines, DOCX/ODT of
400 paragraphs, XLSX of 400 rows x 4 cells. Each candidate runs in a fresh process (peak RSS is
its own) under 1 GiB of address space and 60 CPU seconds; a hostile document gets 30 s wall.

The library candidates are not dependencies of the server; install them to compare:
    .venv/bin/pip install pypdf==7.1.0 pdfminer.six==20260107 python-docx==1.2.0 openpyxl==3.1.5 odfpy==1.4.1
    .venv/bin/python bench/find_extract.py [--docs 30]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nextcloud_mcp_server.index import extract_worker  # noqa: E402
from nextcloud_mcp_server.index.extract import Limits, extract_text  # noqa: E402
from tests.index import documents  # noqa: E402

MEMORY = 1 << 30
HOSTILE_DIR = Path(tempfile.gettempdir()) / "find-extract-bench"
HOSTILE = ("zip bomb 1 GiB", "entity bomb", "nesting 100k", "garbage")


def _words(rng: random.Random, count: int) -> str:
    vocabulary = ["boiler", "warranty", "lease", "terms", "invoice", "narwhal", "quarter", "report", "café"]
    return " ".join(rng.choice(vocabulary) for _ in range(count))


def corpus(fmt: str, count: int) -> list[bytes]:
    rng = random.Random(7)
    out = []
    for _ in range(count):
        if fmt == "pdf":
            pages = ["\n".join(_words(rng, 9).replace("é", "e") for _ in range(40)) for _ in range(10)]
            out.append(documents.pdf(pages))
        elif fmt == "docx":
            out.append(documents.docx([_words(rng, 12) for _ in range(400)]))
        elif fmt == "xlsx":
            out.append(documents.xlsx([[_words(rng, 2) for _ in range(4)] for _ in range(400)]))
        else:
            out.append(documents.odt([_words(rng, 12) for _ in range(400)]))
    return out


def hostile(fmt: str, name: str) -> bytes:
    """Built once by the parent (the 1 GiB bomb takes seconds to compress) and read from a file."""
    kept = HOSTILE_DIR / f"{fmt}-{name.replace(' ', '_')}"
    if kept.exists():
        return kept.read_bytes()
    data = _hostile(fmt, name)
    kept.write_bytes(data)
    return data


def hostile_cases(fmt: str) -> tuple[str, ...]:
    """Hostile documents are built as PDF and DOCX (XLSX and ODT share our walk)."""
    return {"pdf": ("looping", "garbage"), "docx": HOSTILE}.get(fmt, ())


def _hostile(fmt: str, name: str) -> bytes:
    if name == "garbage":
        return (b"%PDF-1.7\n" if fmt == "pdf" else b"PK\x03\x04") + random.Random(3).randbytes(200_000)
    if fmt == "pdf":
        return documents.looping_pdf()
    if name == "zip bomb 1 GiB":
        return documents.zip_bomb_docx(1 << 30)
    return documents.entity_bomb_docx() if name == "entity bomb" else documents.deep_docx()


def ours(fmt: str) -> Callable[[bytes], str]:
    return lambda data: extract_worker.extract(fmt, data, 256 * 1024, 500)


def pypdfium2_text(data: bytes) -> str:
    return ours("pdf")(data)


def pypdf_text(data: bytes) -> str:
    import pypdf

    return "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages)


def pdfminer_text(data: bytes) -> str:
    from pdfminer.high_level import extract_text as pdfminer_extract

    return str(pdfminer_extract(io.BytesIO(data)))


def python_docx_text(data: bytes) -> str:
    import docx

    return "\n".join(p.text for p in docx.Document(io.BytesIO(data)).paragraphs)


def openpyxl_text(data: bytes) -> str:
    import openpyxl

    book = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    return "\n".join(str(v) for sheet in book for row in sheet.iter_rows(values_only=True) for v in row)


def odfpy_text(data: bytes) -> str:
    from odf import opendocument, teletype, text

    document = opendocument.load(io.BytesIO(data))
    return "\n".join(teletype.extractText(p) for p in document.getElementsByType(text.P))


CANDIDATES: dict[str, list[tuple[str, Callable[[bytes], str]]]] = {
    "pdf": [("pypdfium2", pypdfium2_text), ("pypdf", pypdf_text), ("pdfminer.six", pdfminer_text)],
    "docx": [("zip+expat (ours)", ours("docx")), ("python-docx", python_docx_text)],
    "xlsx": [("zip+expat (ours)", ours("xlsx")), ("openpyxl", openpyxl_text)],
    "odt": [("zip+expat (ours)", ours("odt")), ("odfpy", odfpy_text)],
}


def child(fmt: str, name: str, case: str, count: int) -> None:
    """In a fresh process: run one candidate over the corpus (or one hostile document)."""
    extract_worker.limit_self(MEMORY, 60)
    function = dict(CANDIDATES[fmt])[name]
    docs = corpus(fmt, count) if case == "corpus" else [hostile(fmt, case)]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    try:
        chars = sum(len(function(d)) for d in docs)
        outcome = f"text ({chars} chars)" if case != "corpus" else "ok"
    except ImportError:
        outcome = "not installed"
    except MemoryError:
        outcome = "MemoryError"
    except Exception as exc:  # what each library does with hostile input is what we measure
        outcome = f"refused: {type(exc).__name__}"
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "ms": 1000 * elapsed / len(docs),
                "peak_mb": peak / 1024,
                "grew_mb": (peak - before) / 1024,
                "outcome": outcome,
            }
        )
    )


def run_child(fmt: str, name: str, case: str, count: int) -> dict[str, object]:
    command = [sys.executable, __file__, "--child", fmt, name, case, str(count)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=30 if case != "corpus" else 600
        )
    except subprocess.TimeoutExpired:
        return {"outcome": "still running after 30 s (killed)"}
    if done.returncode != 0:
        return {"outcome": f"died (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}"}
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


async def through_worker(fmt: str, count: int) -> tuple[float, str]:
    docs = corpus(fmt, count)
    started = time.perf_counter()
    errors = [found.error for d in docs if (found := await extract_text(fmt, d, Limits())).error]
    return 1000 * (time.perf_counter() - started) / count, errors[0] if errors else "ok"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=30)
    parser.add_argument("--child", nargs=4)
    args = parser.parse_args()
    if args.child:
        fmt, name, case, count = args.child
        child(fmt, name, case, int(count))
        return
    HOSTILE_DIR.mkdir(exist_ok=True)
    for fmt in CANDIDATES:
        for case in hostile_cases(fmt):
            hostile(fmt, case)
    print(f"{'format':6} {'candidate':18} {'ms/doc':>8} {'peak MB':>8}  hostile documents")
    for fmt, candidates in CANDIDATES.items():
        for name, _ in candidates:
            measured = run_child(fmt, name, "corpus", args.docs)
            if measured["outcome"] != "ok":
                print(f"{fmt:6} {name:18} {measured['outcome']}")
                continue
            outcomes = []
            for case in hostile_cases(fmt):
                got = run_child(fmt, name, case, 1)
                extra = f", {got['ms']:.0f} ms, {got['peak_mb']:.0f} MB" if "ms" in got else ""
                outcomes.append(f"{case}: {got['outcome']}{extra}")
            print(
                f"{fmt:6} {name:18} {measured['ms']:8.1f} {measured['peak_mb']:8.0f}  " + "; ".join(outcomes)
            )
    for fmt in CANDIDATES:
        ms, error = asyncio.run(through_worker(fmt, args.docs))
        print(
            f"{fmt:6} {'server path':18} {ms:8.1f} {'-':>8}  (a bounded worker process per document; {error})"
        )


if __name__ == "__main__":
    main()
