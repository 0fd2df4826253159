"""The base every typed answer shares, and the one plain-text reading of an app's text fields."""

from __future__ import annotations

import pytest
from pydantic import Field, ValidationError, field_validator

from nextcloud_mcp_server.nextcloud.models import AppModel, FrozenAppModel, plain_text


class _Thing(AppModel):
    name: str = ""
    made_by: str = Field(default="", alias="madeBy")

    _plain = field_validator("name", "made_by", mode="before")(plain_text)


class _Kept(FrozenAppModel):
    name: str = ""
    made_by: str = Field(default="", alias="madeBy")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("a recipe", "a recipe"),
        ("", ""),
        (4, "4"),
        (2.5, "2.5"),
        (None, ""),
        (True, ""),
        ([1, 2], ""),
        ({"text": "x"}, ""),
    ],
)
def test_plain_text_keeps_strings_and_numbers_and_drops_the_rest(value: object, text: str) -> None:
    assert plain_text(value) == text


def test_an_app_model_ignores_new_fields_and_takes_alias_or_name() -> None:
    by_alias = _Thing.model_validate({"name": 7, "madeBy": None, "addedIn35": {"x": 1}})
    by_name = _Thing.model_validate({"name": ["a"], "made_by": "alice"})
    assert (by_alias.name, by_alias.made_by) == ("7", "")
    assert (by_name.name, by_name.made_by) == ("", "alice")
    assert not hasattr(by_alias, "addedIn35")


def test_a_frozen_app_model_keeps_the_base_and_cannot_change() -> None:
    kept = _Kept.model_validate({"madeBy": "alice", "unknown": 1})
    assert kept.made_by == "alice"
    assert _Kept.model_validate({"made_by": "bob"}).made_by == "bob"
    with pytest.raises(ValidationError):
        kept.name = "changed"
    assert hash(kept) == hash(_Kept(madeBy="alice"))
