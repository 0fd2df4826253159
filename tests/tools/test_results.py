"""The answers tools build by hand: the text says what the structured content holds."""

from __future__ import annotations

import json

from pydantic import BaseModel

from nextcloud_mcp_server.tools._results import answer, stale_version


class Item(BaseModel):
    id: int
    title: str
    note: str | None = None


ITEM = Item(id=7, title='Groceries "weekly"', note=None)


def test_an_answer_carries_the_model_as_structured_content_and_as_json_text() -> None:
    result = answer(ITEM)
    assert not result.is_error
    assert result.structured_content == {"id": 7, "title": 'Groceries "weekly"', "note": None}
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]


def test_a_stale_version_says_why_and_hands_back_the_current_one() -> None:
    result = stale_version(ValueError("the note changed since you read it"), "note", "current_note", ITEM)
    assert result.is_error
    assert result.structured_content == {"error": "conflict", "current_note": ITEM.model_dump()}
    text = result.content[0].text  # type: ignore[union-attr]
    reason, _, current = text.partition(". Current note: ")
    assert reason == "the note changed since you read it"
    assert json.loads(current) == ITEM.model_dump()
