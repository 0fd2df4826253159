"""Forms toolset: the Forms app's forms, their questions and submissions. A form is created with
its questions in one call; answers name choices by their text, checked against the form's options
before anything is sent."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.names import check_visible
from nextcloud_mcp_server.tools._arguments import StrictArguments
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.forms import DECLARATION
from nextcloud_mcp_server.toolsets.forms.client import Form, FormsClient, Question

__all__ = ["toolset"]

toolset = Toolset("forms")

FormId = Annotated[int, Field(ge=1, le=2**53, description="The form's id, as listed")]
CHOICES = ("multiple", "multiple_unique", "dropdown")
MAX_QUESTIONS = 50
MAX_ANSWER = 5_000
MAX_SUBMISSIONS = 100


class QuestionIn(StrictArguments):
    text: Annotated[str, Field(min_length=1, max_length=1_000)]
    type: Literal["short", "long", "multiple", "multiple_unique", "dropdown", "date"] = Field(
        default="short", description="multiple: checkboxes; multiple_unique: one choice; dropdown"
    )
    options: Annotated[list[Annotated[str, Field(min_length=1, max_length=300)]], Field(max_length=50)] = (
        Field(default_factory=list, description="The choices of multiple, multiple_unique and dropdown")
    )


class FormOut(BaseModel):
    id: int
    title: str
    submissions: int
    updated: str = Field(description="ISO 8601 UTC")


class FormList(BaseModel):
    forms: list[FormOut]
    total: int


class QuestionOut(BaseModel):
    id: int
    type: str
    text: str
    options: list[str]


class FormDetail(BaseModel):
    id: int
    title: str
    description: str
    questions: list[QuestionOut]


class SubmissionOut(BaseModel):
    id: int
    user: str
    submitted: str
    answers: dict[str, list[str]] = Field(description="Question text -> the answers given")


class SubmissionList(BaseModel):
    form_id: int
    submissions: list[SubmissionOut]
    total: int
    next_offset: int | None = None


class Submitted(BaseModel):
    form_id: int
    answered: int = Field(description="Questions answered")


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(min(max(seconds, 0), 253402300799)))


def _detail(form: Form) -> FormDetail:
    return FormDetail(
        id=form.id,
        title=form.title[:300],
        description=form.description[:4_000],
        questions=[
            QuestionOut(
                id=q.id, type=q.type, text=q.text[:1_000], options=[o.text[:300] for o in q.options[:50]]
            )
            for q in form.questions[:MAX_QUESTIONS]
        ],
    )


def checked_questions(questions: list[QuestionIn]) -> list[QuestionIn]:
    """Choice questions need two or more distinct options; others take none."""
    for question in questions:
        check_visible(question.text, "a question")
        if question.type in CHOICES:
            if len(question.options) < 2 or len(set(question.options)) != len(question.options):
                raise InvalidInput(
                    f'"{question.text[:80]}" ({question.type}) needs two or more different options'
                )
            for option in question.options:
                check_visible(option, "an option")
        elif question.options:
            raise InvalidInput(
                f'"{question.text[:80]}" is {question.type}: only choice questions take options'
            )
    return questions


def encoded_answers(form: Form, answers: dict[str, str | list[str]]) -> dict[int, list[str]]:
    """The model's {question id: text or choices} as Forms takes it: choices by option id."""
    by_id: dict[str, Question] = {str(q.id): q for q in form.questions}
    out: dict[int, list[str]] = {}
    for key, value in answers.items():
        question = by_id.get(key.strip())
        if question is None:
            raise InvalidInput(f"question {key[:20]!r} is not in form {form.id}: see nc_forms_get_form")
        values = [value] if isinstance(value, str) else value
        if any(len(v) > MAX_ANSWER for v in values):
            raise InvalidInput(f"an answer is longer than {MAX_ANSWER:,} characters")
        if question.type in CHOICES:
            ids = {o.text: str(o.id) for o in question.options}
            unknown = [v for v in values if v not in ids]
            if unknown:
                known = ", ".join(repr(o.text[:40]) for o in question.options[:20])
                raise InvalidInput(
                    f'"{unknown[0][:80]}" is not a choice of "{question.text[:80]}"; its choices: {known}'
                )
            if question.type != "multiple" and len(values) != 1:
                raise InvalidInput(f'"{question.text[:80]}" takes exactly one choice')
            out[question.id] = [ids[v] for v in values]
        else:
            if len(values) != 1:
                raise InvalidInput(f'"{question.text[:80]}" takes one text answer')
            out[question.id] = values
    return out


@toolset.tool(title="List forms", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_forms_list_forms(ctx: Context[Any, Any]) -> FormList:
    """Your forms, most recently changed first, with their number of submissions."""
    nc = await nextcloud_for(ctx)
    forms = sorted(await nc.api(FormsClient).forms(), key=lambda f: (f.updated, f.id), reverse=True)
    return FormList(
        forms=[
            FormOut(id=f.id, title=f.title[:300], submissions=f.submissions, updated=_iso(f.updated))
            for f in forms[:200]
        ],
        total=len(forms),
    )


@toolset.tool(title="Get a form", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_forms_get_form(form_id: FormId, ctx: Context[Any, Any]) -> FormDetail:
    """A form with its questions (ids, types) and their choices, for nc_forms_submit."""
    nc = await nextcloud_for(ctx)
    return _detail(await nc.api(FormsClient).form(form_id))


@toolset.tool(title="Create a form")
@require_scopes(DECLARATION.write)
async def nc_forms_create_form(
    title: Annotated[str, Field(min_length=1, max_length=300)],
    questions: Annotated[list[QuestionIn], Field(min_length=1, max_length=MAX_QUESTIONS)],
    ctx: Context[Any, Any],
    description: Annotated[str, Field(max_length=4_000)] = "",
) -> FormDetail:
    """Create a form with its questions, in the order given. Only you can open it until shared."""
    check_visible(title, "the title")
    checked_questions(questions)
    nc = await nextcloud_for(ctx)
    client = nc.api(FormsClient)
    form = await client.create(title.strip(), description)
    # the answer is made of what Forms answered each creation: nothing is read back (issue 43)
    made = [await client.add_question(form.id, q.type, q.text.strip(), q.options) for q in questions]
    return _detail(form.model_copy(update={"questions": made}))


@toolset.tool(title="Submit a form")
@require_scopes(DECLARATION.write)
async def nc_forms_submit(
    form_id: FormId,
    answers: Annotated[
        dict[str, str | list[str]],
        Field(max_length=MAX_QUESTIONS, description="Question id -> text, or the choice text(s)"),
    ],
    ctx: Context[Any, Any],
) -> Submitted:
    """Submit answers to a form, as yourself. Choices are named by their text."""
    nc = await nextcloud_for(ctx)
    client = nc.api(FormsClient)
    form = await client.form(form_id)
    encoded = encoded_answers(form, answers)
    if not encoded:
        raise InvalidInput("give at least one answer")
    await client.submit(form_id, encoded)
    return Submitted(form_id=form_id, answered=len(encoded))


@toolset.tool(title="Read a form's submissions", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_forms_list_submissions(
    form_id: FormId,
    ctx: Context[Any, Any],
    limit: Annotated[int, Field(ge=1, le=MAX_SUBMISSIONS)] = 30,
    offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0,
) -> SubmissionList:
    """The answers submitted to a form you own, newest first, by question text."""
    nc = await nextcloud_for(ctx)
    client = nc.api(FormsClient)
    submissions, questions = await client.submissions(form_id)  # one request: both come at once
    texts = {q.id: q.text[:200] for q in questions}
    found = sorted(submissions, key=lambda s: (s.timestamp, s.id), reverse=True)
    page: list[SubmissionOut] = []
    for submission in found[offset : offset + limit]:
        answers: dict[str, list[str]] = {}
        for given in submission.answers[: MAX_QUESTIONS * 10]:
            answers.setdefault(texts.get(given.question_id, f"question {given.question_id}"), []).append(
                given.text[:MAX_ANSWER]
            )
        page.append(
            SubmissionOut(
                id=submission.id, user=submission.user, submitted=_iso(submission.timestamp), answers=answers
            )
        )
    more = offset + limit if offset + limit < len(found) else None
    return SubmissionList(form_id=form_id, submissions=page, total=len(found), next_offset=more)
