"""The answers tools build by hand: the text says what the structured content holds."""

from __future__ import annotations

import json

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from nextcloud_mcp_server.tools._results import ERROR_META_KEY, answer, for_every_client, stale_version


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
    assert result.structured_content is None  # an output schema describes answers, not refusals
    assert result.meta == {ERROR_META_KEY: {"error": "conflict", "current_note": ITEM.model_dump()}}
    text = result.content[0].text  # type: ignore[union-attr]
    reason, _, current = text.partition(". Current note: ")
    assert reason == "the note changed since you read it"
    assert json.loads(current) == ITEM.model_dump()


def test_an_error_result_goes_out_with_its_structured_content_under_meta() -> None:
    """Strict clients check an error's structured content against the tool's output schema too;
    the details a tool put there move to `_meta`, the text and other `_meta` stay."""
    text = [TextContent(type="text", text="Not done: the user declined.")]
    built = CallToolResult(
        is_error=True, content=text, structured_content={"declined": True}, _meta={"other/key": 1}
    )
    sent = for_every_client(built)
    assert sent.is_error
    assert sent.structured_content is None
    assert sent.content == text
    assert sent.meta == {"other/key": 1, ERROR_META_KEY: {"declined": True}}
    assert "structuredContent" not in sent.model_dump(by_alias=True, exclude_none=True)
    answered = answer(ITEM)
    assert for_every_client(answered) is answered
