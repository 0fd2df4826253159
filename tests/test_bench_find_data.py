"""The find benchmark's documents and labels (bench/real/find_data.py): the committed exact-word
queries are the generator's, the volume is what issue 41 names, and each exact query's word is in
its expected document's text and in no other document. No Nextcloud."""

from __future__ import annotations

import io
import json
import re
import zipfile
from types import ModuleType

import pypdfium2

from tests.bench_modules import load_bench


def _find_data() -> ModuleType:
    return load_bench("real/find_data.py", "bench_real_find_data")


def _text(path: str, content: bytes) -> str:
    kind = path.rpartition(".")[2]
    if kind == "pdf":
        pdf = pypdfium2.PdfDocument(content)
        try:
            return "\n".join(page.get_textpage().get_text_range() for page in pdf)
        finally:
            pdf.close()
    if kind in ("docx", "odt"):
        inner = "word/document.xml" if kind == "docx" else "content.xml"
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            return re.sub(r"<[^>]+>", " ", archive.read(inner).decode())
    return content.decode()


def test_committed_exact_queries_are_the_generators_and_the_volume_is_the_issues() -> None:
    data = _find_data()
    committed = json.loads(data.QUERIES.read_text())
    assert committed == data.exact_queries()
    docs = data.corpus_docs() + data.filler_docs()
    assert len(docs) >= 2000
    assert sum(d.path.rpartition(".")[2] in ("pdf", "docx", "odt") for d in docs) >= 500
    assert len({d.path for d in docs}) == len(docs)
    assert len(committed) >= 100
    assert len(data.paraphrase_queries()) >= 100


def test_each_made_up_word_is_in_its_document_only() -> None:
    data = _find_data()
    docs = data.corpus_docs() + data.filler_docs()
    texts = {d.id: _text(d.path, d.content).lower() for d in docs}
    filler = [q for q in data.exact_queries() if q["source"] == "filler"]
    assert {q["format"] for q in filler} == {"pdf", "docx", "odt", "md", "txt"}
    for query in filler:
        holders = [key for key, text in texts.items() if query["q"] in text]
        assert holders == query["relevant"], query
