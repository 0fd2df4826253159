"""The Forms app's OCS API v3 (`/ocs/v2.php/apps/forms/api/v3`). Knows nothing of MCP.

Seen on the real Forms 4.3.14 (Nextcloud 29) and 5.3.5 (Nextcloud 34), alike but for statuses:
- `POST forms` makes an empty form (34 answers 201, 29 200); its title and description are set by
  `PATCH forms/{id}` with `{"keyValuePairs": {...}}`;
- `POST forms/{id}/questions` `{"type", "text"}` adds a question, `POST .../questions/{q}/options`
  `{"optionTexts": [...]}` its options;
- `POST forms/{id}/submissions` `{"answers": {question id: [text or option id]}}` submits;
  `GET forms/{id}/submissions` lists them with the questions;
- an unknown form answers 404 with no body on 34 and 400 on 29.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from pydantic import Field, TypeAdapter, field_validator

from nextcloud_mcp_server.nextcloud.app_api import AppAPI
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidResponse,
    NextcloudError,
    NextcloudHTTPError,
    NotFound,
)
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.models import AppModel, plain_text
from nextcloud_mcp_server.nextcloud.ocs import OCS_HEADERS

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = ["Form", "FormSummary", "FormsClient", "Question", "Submission"]

API = "/ocs/v2.php/apps/forms/api/v3"
FORMS_MISSING = "Forms is not installed or not enabled for you on this Nextcloud"


def _special(exc: NextcloudHTTPError, said: str, what: str) -> NextcloudError | None:
    """An unknown form is 404 (34) or 400 (29) without Forms' own words, as is a missing app. A 400
    with its words is Forms refusing what was sent (a ranking answer that repeats an option): said
    as "Forms refused: ...", where it had been "does not exist"."""
    if exc.status == 404 or (exc.status == 400 and not said):
        return NotFound(
            exc.host,
            f"{what} does not exist or is not shared with you (or Forms is not enabled for you)",
            status=exc.status,
        )
    return None  # the app API's own reading: "Forms refused: <its words>", or the error as it is


class Option(AppModel):
    id: int
    text: str = ""

    _plain = field_validator("text", mode="before")(plain_text)


class Question(AppModel):
    id: int
    type: str = ""
    text: str = ""
    required: bool = Field(default=False, alias="isRequired")
    options: list[Option] = Field(default_factory=list)

    _plain = field_validator("text", "type", mode="before")(plain_text)


class FormSummary(AppModel):
    id: int
    title: str = ""
    submissions: int = Field(default=0, alias="submissionCount")
    updated: int = Field(default=0, alias="lastUpdated")

    _plain = field_validator("title", mode="before")(plain_text)


class Form(AppModel):
    id: int
    title: str = ""
    description: str = ""
    owner: str = Field(default="", alias="ownerId")
    questions: list[Question] = Field(default_factory=list)
    can_submit: bool = Field(default=False, alias="canSubmit")

    _plain = field_validator("title", "description", "owner", mode="before")(plain_text)


class Answer(AppModel):
    question_id: int = Field(alias="questionId")
    text: str = ""

    _plain = field_validator("text", mode="before")(plain_text)


class Submission(AppModel):
    id: int
    user: str = Field(default="", alias="userId")
    timestamp: int = 0
    answers: list[Answer] = Field(default_factory=list)

    _plain = field_validator("user", mode="before")(plain_text)


_SUMMARIES = TypeAdapter(list[FormSummary])
_OPTIONS = TypeAdapter(list[Option])
_QUESTIONS = TypeAdapter(list[Question])
_SUBMISSIONS = TypeAdapter(list[Submission])


class FormsClient:
    """The Forms API for one user."""

    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._api = AppAPI(
            http,
            credential,
            API,
            app="Forms",
            missing=FORMS_MISSING,
            words=(),
            headers=OCS_HEADERS,
            params={"format": "json"},
            special=_special,
        )

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    @property
    def host(self) -> str:
        return self._api.host

    async def _call(self, method: str, path: str, what: str, body: Any = None) -> Any:
        return self._api.ocs_data(await self._api.call(method, path, what, body=body), what)

    async def forms(self) -> list[FormSummary]:
        found: list[FormSummary] = self._api.parse(
            _SUMMARIES, await self._call("GET", "/forms", "the forms"), "forms"
        )
        return found

    async def form(self, form_id: int) -> Form:
        found: Form = self._api.parse(
            TypeAdapter(Form), await self._call("GET", f"/forms/{form_id}", f"form {form_id}"), "a form"
        )
        return found

    async def create(self, title: str, description: str) -> Form:
        """A new form with that title and description, as Forms answered its creation (its PATCH
        answers only the id: the title and description are as sent)."""
        made = await self._call("POST", "/forms", "the form", body={})
        if not isinstance(made, dict) or not isinstance(made.get("id"), int):
            raise InvalidResponse(self.host, "Forms did not answer the new form's id")
        form_id: int = made["id"]
        pairs = {"title": title, "description": description}
        await self._call("PATCH", f"/forms/{form_id}", f"form {form_id}", body={"keyValuePairs": pairs})
        form: Form = self._api.parse(TypeAdapter(Form), made, "a form")
        return form.model_copy(update=pairs)

    async def add_question(self, form_id: int, kind: str, text: str, options: list[str]) -> Question:
        """Add a question with its options; Forms answers the question and then its options
        (4.3 and 5.3 alike), so the new question is known without reading the form."""
        made = await self._call(
            "POST", f"/forms/{form_id}/questions", f"form {form_id}", body={"type": kind, "text": text}
        )
        if not isinstance(made, dict) or not isinstance(made.get("id"), int):
            raise InvalidResponse(self.host, "Forms did not answer the new question's id")
        question: Question = self._api.parse(TypeAdapter(Question), made, "a question")
        if options:
            path = f"/forms/{form_id}/questions/{made['id']}/options"
            added = await self._call("POST", path, f"form {form_id}", body={"optionTexts": options})
            listed: list[Option] = self._api.parse(_OPTIONS, added, "options")
            question = question.model_copy(update={"options": listed})
        return question

    async def submit(self, form_id: int, answers: dict[int, list[str]]) -> None:
        body = {"answers": {str(question): values for question, values in answers.items()}}
        await self._call("POST", f"/forms/{form_id}/submissions", f"form {form_id}", body=body)

    async def submissions(self, form_id: int) -> tuple[list[Submission], list[Question]]:
        """A form's submissions and its questions: Forms answers both at once (4.3 and 5.3), so
        naming the answers by their questions needs no read of the form."""
        found = await self._call("GET", f"/forms/{form_id}/submissions", f"form {form_id}")
        listed = found.get("submissions") if isinstance(found, dict) else None
        asked = found.get("questions") if isinstance(found, dict) else None
        result: list[Submission] = self._api.parse(
            _SUBMISSIONS, listed if isinstance(listed, list) else [], "submissions"
        )
        questions: list[Question] = self._api.parse(
            _QUESTIONS, asked if isinstance(asked, list) else [], "questions"
        )
        return result, questions
