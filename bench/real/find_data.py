"""The documents of the find benchmark on the real Nextcloud (issues 41, 42), built in code, the
same on every run: the labelled household corpus of bench/find_meaning/ (notes as Notes files,
files as PDF, DOCX and ODT, events as calendar objects), and enough filler files around it (PDF,
DOCX, ODT, Markdown and plain text in project folders) to reach the volume the targets name.
Each filler file holds one made-up word no other file holds: the exact-word queries ask for it.

    .venv/bin/python bench/real/find_data.py --write   # rewrites bench/real/find_data/exact.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from tests.index import documents  # noqa: E402

__all__ = ["SPEC", "Doc", "Event", "corpus_docs", "events", "exact_queries", "filler_docs"]

MEANING = ROOT / "bench" / "find_meaning"
QUERIES = HERE / "find_data" / "exact.json"
SPEC: dict[str, int | str] = {
    "filler": 1760,
    "binary_every": 3,
    "exact_filler_queries": 150,
    "corpus": "find_meaning",
    "v": 1,
}
MTIME = int(datetime(2026, 3, 2, tzinfo=UTC).timestamp())
BINARY = ("pdf", "docx", "odt")


@dataclass(frozen=True)
class Doc:
    id: str
    path: str  # under the user's files root
    kind: str  # what nc_find calls it: note or file
    title: str  # a note's title (its file name without .md); a file's name
    content: bytes


@dataclass(frozen=True)
class Event:
    id: str
    href: str
    ics: str


def _safe(title: str) -> str:
    return title.replace("/", "-").replace("\\", "-").strip()


def _lines(text: str, width: int = 90) -> str:
    """A PDF line per `width` characters (the documents' PDF writer does not wrap)."""
    out: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split():
            if line and len(line) + 1 + len(word) > width:
                out.append(line)
                line = word
            else:
                line = f"{line} {word}".strip()
        out.append(line)
    return "\n".join(out)


def render(fmt: str, title: str, body: str) -> bytes:
    if fmt == "pdf":
        # Helvetica in WinAnsi: Latin-1 letters (German umlauts) are kept, the euro sign is not
        text = _lines(f"{title}\n\n{body}").replace("€", "EUR")
        return documents.pdf([text.encode("latin-1", "replace").decode("latin-1")])
    paragraphs = [title, *[p for p in body.split("\n") if p.strip()]]
    if fmt == "docx":
        return documents.docx(paragraphs)
    if fmt == "odt":
        return documents.odt(paragraphs)
    return f"# {title}\n\n{body}\n".encode()


def _corpus() -> list[dict[str, str]]:
    loaded: list[dict[str, str]] = json.loads((MEANING / "corpus.json").read_text())
    return loaded


def corpus_docs() -> list[Doc]:
    """The labelled corpus's notes (Notes/Household/<title>.md) and files (Documents/, as PDF,
    DOCX and ODT in turn)."""
    out: list[Doc] = []
    files = 0
    for d in _corpus():
        if d["kind"] == "note":
            title = _safe(d["title"])
            out.append(Doc(d["id"], f"Notes/Household/{title}.md", "note", title, f"{d['body']}\n".encode()))
        elif d["kind"] == "file":
            fmt = BINARY[files % 3]
            files += 1
            name = f"{_safe(d['title'])}.{fmt}"
            out.append(
                Doc(d["id"], f"Documents/Household/{name}", "file", name, render(fmt, d["title"], d["body"]))
            )
    return out


def events() -> list[Event]:
    """The corpus's events, an hour each, one a day from the measured anchor backwards."""
    out = []
    start = datetime(2026, 2, 27, 9, tzinfo=UTC)
    stamp = start.strftime("%Y%m%dT%H%M%SZ")
    for n, d in enumerate(x for x in _corpus() if x["kind"] == "event"):
        begin = start - timedelta(days=3 * n)

        def esc(text: str) -> str:
            return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")

        ics = "\r\n".join(
            [
                "BEGIN:VCALENDAR",
                "VERSION:2.0",
                "PRODID:-//nextcloud-mcp-bridge//find bench//EN",
                "BEGIN:VEVENT",
                f"UID:{d['id']}",
                f"DTSTAMP:{stamp}",
                f"DTSTART:{begin.strftime('%Y%m%dT%H%M%SZ')}",
                f"DTEND:{(begin + timedelta(hours=1)).strftime('%Y%m%dT%H%M%SZ')}",
                f"SUMMARY:{esc(d['title'])}",
                f"DESCRIPTION:{esc(d['body'])}",
                "END:VEVENT",
                "END:VCALENDAR",
                "",
            ]
        )
        out.append(Event(d["id"], f"{d['id']}.ics", ics))
    return out


_SYLLABLES = ("ka", "lo", "mi", "ren", "tus", "vor", "qua", "zel", "bri", "dan", "fex", "gor", "hul", "jip")
_TEAMS = ("platform", "billing", "support", "design", "research", "logistics", "legal", "sales")
_TOPICS = (
    "the migration plan and its open risks",
    "the supplier contract renewal and the new prices",
    "hiring for the second half of the year",
    "the customer survey results and follow-up actions",
    "the office move and the desks that are still missing",
    "quarterly figures, travel costs and the budget forecast",
    "the release schedule and the bugs that block it",
    "training sessions for the new reporting system",
)
_SENTENCES = (
    "Action items were assigned and will be reviewed next week.",
    "Everyone agreed to keep the scope small until the review.",
    "The numbers in the appendix are preliminary and may change.",
    "Questions should go to the team lead before Friday.",
    "The previous decision stands unless new facts come up.",
    "A shorter status report will be sent every Monday.",
    "Costs stay within the approved budget for now.",
    "The draft is attached; comments are welcome in the margins.",
)


def _code_word(n: int) -> str:
    """A made-up word per n, unique (the syllables spell n in base 14), never a real word."""
    parts = []
    value = n + 14 * 14  # at least three syllables
    while value:
        value, digit = divmod(value, len(_SYLLABLES))
        parts.append(_SYLLABLES[digit])
    return "x" + "".join(parts)


def filler_docs() -> list[Doc]:
    """Project files: every `binary_every`-th one a PDF, DOCX or ODT, the rest Markdown or text."""
    rng = random.Random(4141)
    out = []
    for n in range(int(SPEC["filler"])):
        team, topic = _TEAMS[n % len(_TEAMS)], rng.choice(_TOPICS)
        word = _code_word(n)
        body = "\n".join(
            [
                f"Minutes of the {team} meeting number {n}, about {topic}.",
                " ".join(rng.sample(_SENTENCES, 4)),
                f"The reference for this item is {word}; quote it in replies.",
                " ".join(rng.sample(_SENTENCES, 3)),
            ]
        )
        title = f"{team.title()} minutes {n:04}"
        if n % int(SPEC["binary_every"]) == 0:
            fmt = BINARY[(n // int(SPEC["binary_every"])) % 3]
        else:
            fmt = "md" if n % 2 else "txt"
        name = f"{team}-minutes-{n:04}.{fmt}"
        folder = f"Projects/{team}/{2020 + n % 6}"
        content = render(fmt, title, body) if fmt != "txt" else f"{title}\n\n{body}\n".encode()
        out.append(Doc(f"f{n:04}", f"{folder}/{name}", "file", name, content))
    return out


def exact_queries() -> list[dict[str, Any]]:
    """The corpus's own exact-word queries (bench/find_meaning) and one per chosen filler file:
    its made-up word (the chosen files are spread over every format)."""
    loaded = json.loads((MEANING / "queries.json").read_text())
    out: list[dict[str, Any]] = [{**q, "source": "corpus"} for q in loaded["exact"]]
    fillers = filler_docs()
    wanted = int(SPEC["exact_filler_queries"])
    for doc in fillers[:: len(fillers) // wanted][:wanted]:
        word = _code_word(int(doc.id[1:]))
        out.append(
            {
                "q": word,
                "relevant": [doc.id],
                "lang": "en",
                "source": "filler",
                "format": doc.path.rpartition(".")[2],
            }
        )
    return out


def paraphrase_queries() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((MEANING / "queries.json").read_text())["paraphrase"]
    return loaded


def spec_hash() -> str:
    digest = hashlib.sha256(json.dumps(SPEC, sort_keys=True).encode())
    digest.update((MEANING / "corpus.json").read_bytes())
    return digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {QUERIES.relative_to(ROOT)}")
    args = parser.parse_args()
    docs = corpus_docs() + filler_docs()
    formats: dict[str, int] = {}
    for d in docs:
        ext = d.path.rpartition(".")[2]
        formats[ext] = formats.get(ext, 0) + 1
    print(f"{len(docs)} files ({formats}), {len(events())} events, {len(exact_queries())} exact queries")
    if args.write:
        QUERIES.parent.mkdir(exist_ok=True)
        QUERIES.write_text(json.dumps(exact_queries(), indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
