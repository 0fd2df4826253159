"""The Forms toolset end to end: the SDK's client, the server, and the real Forms 4.3.14 (Nextcloud
29) and 5.3.5 (Nextcloud 34); the form and its submission are checked through Forms' own API.
Questions and answers are checked without a Nextcloud."""

from __future__ import annotations

from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NextcloudHTTPError, NotFound
from nextcloud_mcp_server.toolsets.forms.client import Form, _special
from nextcloud_mcp_server.toolsets.forms.tools import QuestionIn, checked_questions, encoded_answers
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured

API = "/ocs/v2.php/apps/forms/api/v3"
TOOLS = {
    "nc_forms_list_forms": ("forms:read", True),
    "nc_forms_get_form": ("forms:read", True),
    "nc_forms_create_form": ("forms:write", False),
    "nc_forms_submit": ("forms:write", False),
    "nc_forms_list_submissions": ("forms:read", True),
}
FORM = Form.model_validate(
    {
        "id": 7,
        "questions": [
            {"id": 1, "type": "short", "text": "Name?"},
            {
                "id": 2,
                "type": "multiple_unique",
                "text": "Colour?",
                "options": [{"id": 5, "text": "Red"}, {"id": 6, "text": "Blue"}],
            },
            {
                "id": 3,
                "type": "multiple",
                "text": "Fruit?",
                "options": [{"id": 8, "text": "Apple"}, {"id": 9, "text": "Pear"}],
            },
        ],
    }
)


def _api(nextcloud: Nextcloud, path: str) -> Any:
    with nextcloud.http(nextcloud.alice) as http:
        got = http.get(f"{API}{path}", params={"format": "json"}, headers={"Accept": "application/json"})
    assert got.status_code == 200, got.text[:300]
    return got.json()["ocs"]["data"]


@pytest.mark.parametrize(
    ("answers", "said"),
    [
        ({"4": "x"}, "question '4' is not in form 7"),
        ({"2": "Green"}, "\"Green\" is not a choice of \"Colour?\"; its choices: 'Red', 'Blue'"),
        ({"2": ["Red", "Blue"]}, "takes exactly one choice"),
        ({"1": ["a", "b"]}, "takes one text answer"),
        ({"1": "x" * 5_001}, "longer than 5,000"),
    ],
)
def test_answers_are_checked_against_the_form(answers: dict[str, Any], said: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        encoded_answers(FORM, answers)
    assert said in str(refused.value)


def test_choices_are_sent_by_their_option_ids() -> None:
    assert encoded_answers(FORM, {"1": "Ann", "2": "Blue", "3": ["Apple", "Pear"]}) == {
        1: ["Ann"],
        2: ["6"],
        3: ["8", "9"],
    }


@pytest.mark.parametrize(
    "question",
    [
        {"text": "Colour?", "type": "dropdown", "options": ["Red"]},
        {"text": "Colour?", "type": "multiple", "options": ["Red", "Red"]},
        {"text": "Name?", "type": "short", "options": ["Red", "Blue"]},
    ],
)
def test_questions_are_checked_before_any_request(question: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        checked_questions([QuestionIn.model_validate(question)])


async def test_create_a_form_submit_it_and_read_the_answers(apps_nextcloud: Nextcloud) -> None:
    nc = apps_nextcloud
    config = nc.settings(nc.alice, nextcloud_mcp_toolsets="forms")
    with running_app(config) as base:
        async with http_session(f"{base}/mcp") as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == set(TOOLS)
            for name, (scope, read_only) in TOOLS.items():
                assert tools[name].meta is not None
                assert tools[name].meta["nextcloud-mcp/scopes"] == [scope]
                assert tools[name].annotations is not None
                assert tools[name].annotations.read_only_hint is read_only

            made = structured(
                await session.call_tool(
                    "nc_forms_create_form",
                    {
                        "title": "Team lunch",
                        "description": "Where shall we go?",
                        "questions": [
                            {"text": "Your name?"},
                            {"text": "Cuisine?", "type": "multiple_unique", "options": ["Thai", "Italian"]},
                        ],
                    },
                )
            )
            form_id = made["id"]
            stored = _api(nc, f"/forms/{form_id}")
            assert (stored["title"], stored["description"]) == ("Team lunch", "Where shall we go?")
            assert [(q["type"], q["text"]) for q in stored["questions"]] == [
                ("short", "Your name?"),
                ("multiple_unique", "Cuisine?"),
            ]
            assert [o["text"] for o in stored["questions"][1]["options"]] == ["Thai", "Italian"]
            listed = structured(await session.call_tool("nc_forms_list_forms", {}))
            assert [f["title"] for f in listed["forms"] if f["id"] == form_id] == ["Team lunch"]

            name, cuisine = (q["id"] for q in made["questions"])
            submitted = structured(
                await session.call_tool(
                    "nc_forms_submit",
                    {"form_id": form_id, "answers": {str(name): "Alice", str(cuisine): "Thai"}},
                )
            )
            assert submitted == {"form_id": form_id, "answered": 2}
            [submission] = _api(nc, f"/forms/{form_id}/submissions")["submissions"]
            assert sorted((a["questionId"], a["text"]) for a in submission["answers"]) == [
                (name, "Alice"),
                (cuisine, "Thai"),
            ]
            read = structured(await session.call_tool("nc_forms_list_submissions", {"form_id": form_id}))
            assert read["total"] == 1
            assert read["submissions"][0]["answers"] == {"Your name?": ["Alice"], "Cuisine?": ["Thai"]}
            missing = await session.call_tool("nc_forms_get_form", {"form_id": form_id + 1000})
            assert missing.is_error
            assert f"form {form_id + 1000} does not exist" in str(missing.content[0].text)  # type: ignore[union-attr]


def test_a_400_with_forms_own_words_is_its_refusal_not_an_unknown_form() -> None:
    """A ranking answer Forms refuses is 400 with its message: it was said as "form 1 does not
    exist", which sent a model looking for another form."""
    refused = NextcloudHTTPError("nc.example", "400", status=400, body="{}")
    assert _special(refused, "Invalid ranking: an option is repeated", "the submission") is None
    unknown = _special(NextcloudHTTPError("nc.example", "400", status=400, body=""), "", "form 1")
    assert isinstance(unknown, NotFound)
    assert "does not exist" in str(unknown)
