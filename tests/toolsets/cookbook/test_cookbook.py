"""The Cookbook toolset end to end: the SDK's client, the server, and the real Cookbook 0.11.5
(Nextcloud 29) and 0.11.9 (Nextcloud 34); every change the tools make is checked through
Cookbook's own API. Its arguments are checked before any request (no Nextcloud needed)."""

from __future__ import annotations

import inspect
import re
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from mcp import ClientSession

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS
from nextcloud_mcp_server.toolsets.cookbook.tools import (
    RECIPE_ARGUMENTS,
    _fields,
    nc_cookbook_create_recipe,
    nc_cookbook_update_recipe,
)
from tests.backends import Nextcloud
from tests.mcp_clients import Human, structured, toolset_session
from tests.strict_clients import refusal_details

API = "/index.php/apps/cookbook/api/v1"
TOOLS = {
    "nc_cookbook_list_recipes": ("cookbook:read", True, False),
    "nc_cookbook_get_recipe": ("cookbook:read", True, False),
    "nc_cookbook_create_recipe": ("cookbook:write", False, False),
    "nc_cookbook_update_recipe": ("cookbook:write", False, False),
    "nc_cookbook_delete_recipe": ("cookbook:write", False, True),
}
NONE: dict[str, Any] = dict.fromkeys(
    (
        "name",
        "description",
        "ingredients",
        "instructions",
        "category",
        "keywords",
        "servings",
        "prep_minutes",
        "cook_minutes",
        "source_url",
    )
)


def _api(nextcloud: Nextcloud, method: str, path: str) -> tuple[int, Any]:
    with nextcloud.http(nextcloud.alice) as http:
        got = http.request(method, f"{API}{path}", headers={"Accept": "application/json"})
    return got.status_code, got.json() if got.text else None


def _text(result: Any) -> str:
    return str(result.content[0].text)


def _session(nextcloud: Nextcloud, human: Human | None = None) -> AbstractAsyncContextManager[ClientSession]:
    return toolset_session(nextcloud, "cookbook", human)


def test_not_in_the_default_set() -> None:
    assert "cookbook" not in DEFAULT_TOOLSETS


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"name": "a/b"}, "no '/'"),
        ({"name": "   "}, "visible character"),
        ({"name": "Cake\u202e"}, "U+202E"),
        ({"keywords": ["sweet,quick"]}, "without commas"),
        ({"source_url": "file:///etc/passwd"}, "https://"),
        ({"description": "x" * 20_001}, "longer than"),
    ],
)
def test_arguments_are_refused_before_any_request(given: dict[str, Any], said: str) -> None:
    with pytest.raises(InvalidInput, match=re.escape(said)):
        _fields(**{**NONE, **given})


def test_adding_and_updating_take_the_same_recipe_arguments() -> None:
    """Both tools hand their recipe arguments to `_fields` by name: each must take every one."""
    assert set(NONE) == set(RECIPE_ARGUMENTS)
    for tool in (nc_cookbook_create_recipe, nc_cookbook_update_recipe):
        assert set(RECIPE_ARGUMENTS) <= set(inspect.signature(tool).parameters), tool.__name__


def test_times_and_keywords_in_cookbooks_form() -> None:
    fields = _fields(**{**NONE, "prep_minutes": 75, "keywords": [" sweet ", "", "quick"], "servings": 4})
    assert fields == {"prepTime": "PT1H15M0S", "keywords": "sweet,quick", "recipeYield": 4}


async def test_add_find_change_and_delete_a_recipe(apps_nextcloud: Nextcloud) -> None:
    """The five tools with their scopes; a recipe added from fields is stored as Cookbook keeps it,
    found by a word of its name, changed field by field (a stale version writes nothing), and
    deleted only after the human approved the question that names it."""
    nc = apps_nextcloud
    human = Human()
    async with _session(nc, human) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == set(TOOLS)
        for name, (scope, read_only, destructive) in TOOLS.items():
            assert tools[name].meta is not None
            assert tools[name].meta["nextcloud-mcp/scopes"] == [scope]
            assert tools[name].annotations is not None
            assert (tools[name].annotations.read_only_hint, tools[name].annotations.destructive_hint) == (
                read_only,
                destructive,
            )

        created = structured(
            await session.call_tool(
                "nc_cookbook_create_recipe",
                {
                    "name": "Buttermilk pancakes",
                    "ingredients": ["2 eggs", "200 g flour", "300 ml buttermilk"],
                    "instructions": ["Whisk everything", "Fry in butter"],
                    "category": "Breakfast",
                    "keywords": ["sweet", "quick"],
                    "servings": 4,
                    "prep_minutes": 10,
                    "source_url": "https://example.com/pancakes",
                },
            )
        )
        recipe_id = created["id"]
        status, stored = _api(nc, "GET", f"/recipes/{recipe_id}")
        assert status == 200
        assert stored["name"] == "Buttermilk pancakes"
        assert stored["recipeIngredient"] == ["2 eggs", "200 g flour", "300 ml buttermilk"]
        assert (stored["recipeCategory"], stored["prepTime"], stored["url"]) == (
            "Breakfast",
            "PT0H10M0S",
            "https://example.com/pancakes",
        )
        assert sorted(stored["keywords"].split(",")) == ["quick", "sweet"]

        twice = await session.call_tool("nc_cookbook_create_recipe", {"name": "Buttermilk pancakes"})
        assert twice.is_error
        assert "choose another name" in _text(twice)

        found = structured(await session.call_tool("nc_cookbook_list_recipes", {"query": "pancakes"}))
        assert [r["id"] for r in found["recipes"]] == [recipe_id]
        slashed = structured(
            await session.call_tool("nc_cookbook_list_recipes", {"query": "pancakes/crepes"})
        )
        assert isinstance(slashed["recipes"], list)  # structured(): no error; a 405 before (%2F routed)
        assert (
            structured(await session.call_tool("nc_cookbook_list_recipes", {"query": "lasagne"}))["total"]
            == 0
        )

        read = structured(await session.call_tool("nc_cookbook_get_recipe", {"recipe_id": recipe_id}))
        assert read["instructions"] == ["Whisk everything", "Fry in butter"]
        changed = structured(
            await session.call_tool(
                "nc_cookbook_update_recipe",
                {"recipe_id": recipe_id, "version": read["version"], "description": "Fluffy ones"},
            )
        )
        assert changed["description"] == "Fluffy ones"
        _, stored = _api(nc, "GET", f"/recipes/{recipe_id}")
        # the app replaces a recipe whole: every other field is written back as it was
        assert (stored["description"], stored["recipeIngredient"][2]) == ("Fluffy ones", "300 ml buttermilk")
        assert stored["url"] == "https://example.com/pancakes"

        stale = await session.call_tool(
            "nc_cookbook_update_recipe",
            {"recipe_id": recipe_id, "version": read["version"], "name": "Crepes"},
        )
        assert refusal_details(stale)["error"] == "conflict"
        assert _api(nc, "GET", f"/recipes/{recipe_id}")[1]["name"] == "Buttermilk pancakes"

        # emptying the instructions removes content: asked first; declined, nothing changes
        human.approve = False
        emptied = await session.call_tool(
            "nc_cookbook_update_recipe",
            {"recipe_id": recipe_id, "version": changed["version"], "instructions": []},
        )
        assert emptied.is_error
        assert "declined" in _text(emptied)
        assert "instructions" in human.questions[-1]
        assert len(_api(nc, "GET", f"/recipes/{recipe_id}")[1]["recipeInstructions"]) == 2

        declined = await session.call_tool("nc_cookbook_delete_recipe", {"recipe_id": recipe_id})
        assert declined.is_error
        assert '"Buttermilk pancakes"' in human.questions[-1]
        assert "3 ingredients" in human.questions[-1]
        assert _api(nc, "GET", f"/recipes/{recipe_id}")[0] == 200
        human.approve = True
        deleted = structured(await session.call_tool("nc_cookbook_delete_recipe", {"recipe_id": recipe_id}))
        assert deleted == {"id": recipe_id, "name": "Buttermilk pancakes"}
        assert _api(nc, "GET", f"/recipes/{recipe_id}")[0] == 404
        gone = await session.call_tool("nc_cookbook_get_recipe", {"recipe_id": recipe_id})
        assert gone.is_error
        assert f"recipe {recipe_id} does not exist" in _text(gone)
