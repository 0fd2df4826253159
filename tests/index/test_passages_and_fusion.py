"""Cutting text into passages (bounded for any input) and fusing two rankings."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from nextcloud_mcp_server.index.fusion import fuse
from nextcloud_mcp_server.index.passages import MAX_PASSAGES, TARGET_CHARS, passages


def test_a_short_note_is_one_passage_led_by_its_title() -> None:
    [only] = passages("Boiler", "Serviced in May.\nValve replaced.")
    assert only.text == "Boiler\nServiced in May.\nValve replaced."
    assert (only.start, only.end) == (0, len("Serviced in May.\nValve replaced."))


def test_a_heading_starts_a_passage_and_offsets_point_into_the_text() -> None:
    text = "Intro line.\n\n# Kitchen\nTiles.\n\nTap.\n\n# Garden\nHedge."
    found = passages("", text)
    assert [p.text for p in found] == ["Intro line.", "# Kitchen\nTiles.\n\nTap.", "# Garden\nHedge."]
    for p in found:
        assert text[p.start : p.end].startswith(p.text.split("\n")[0])


def test_a_long_paragraph_is_cut_at_sentence_ends() -> None:
    text = "This sentence has some words in it. " * 100
    found = passages("", text)
    assert len(found) > 3
    assert all(len(p.text) <= TARGET_CHARS for p in found)
    assert all(p.text.endswith(".") for p in found)


def test_a_huge_text_gives_a_bounded_number_of_passages() -> None:
    assert len(passages("t", "x" * 5_000_000)) == MAX_PASSAGES
    assert len(passages("t", "a\n\n" * 200_000)) == MAX_PASSAGES
    assert [p.text for p in passages("Title only", "")] == ["Title only"]
    assert passages("", " \n\n \t") == []


@given(st.text(max_size=3000), st.text(max_size=50))
def test_every_passage_is_bounded_and_within_the_text(text: str, title: str) -> None:
    for p in passages(title, text):
        assert 0 <= p.start <= p.end <= len(text)
        assert len(p.text) <= TARGET_CHARS + len(title.strip()) + 1


def test_fusion_rewards_agreement_and_keeps_everything_once() -> None:
    assert fuse([["a", "b", "c"], ["c", "a", "d"]]) == ["a", "c", "b", "d"]
    assert fuse([["x", "x", "y"], []]) == ["x", "y"]
    assert fuse([]) == []


def test_a_server_start_imports_neither_numpy_nor_the_model() -> None:
    """The find toolset and the runtime load without numpy or WordLlama; they come at first use."""
    code = (
        "import sys, nextcloud_mcp_server.runtime, nextcloud_mcp_server.toolsets.find.tools;"
        "print(sorted(m for m in ('numpy', 'wordllama', 'tokenizers') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
