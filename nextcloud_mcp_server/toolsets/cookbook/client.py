"""The Cookbook app's REST API (`/index.php/apps/cookbook/api/v1`). Knows nothing of MCP.

Behaviour seen on the real Cookbook 0.11.5 (Nextcloud 29) and 0.11.9 (Nextcloud 34), the same on
both (tests/toolsets/cookbook/):
- a recipe is a schema.org `Recipe`; `POST /recipes` answers its id, `GET /recipes/{id}` the whole
  recipe, `GET /recipes` and `GET /search/{words}` summaries (the search matches names, keywords
  and categories, not the text);
- `PUT /recipes/{id}` replaces the whole recipe (what is not sent is emptied) and needs the id in
  the body, so an update reads the recipe and writes it back whole;
- a recipe has no ETag: `dateModified` (to the second) is its only version;
- two recipes cannot share a name (409); a recipe without a name is refused (422);
- an unknown recipe answers 404 to a read, but `DELETE` of one answers 200;
- Cookbook's own URL import fetches the page from Nextcloud and refuses local addresses, so it is
  not offered: a recipe's `url` is only stored, never fetched (by Cookbook or by this server).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import quote

from pydantic import Field, TypeAdapter, ValidationError, field_validator

from nextcloud_mcp_server.nextcloud.app_api import AppAPI
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidResponse,
    NextcloudError,
    NextcloudHTTPError,
    NotFound,
    error_for_status,
)
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.models import AppModel, plain_text
from nextcloud_mcp_server.numbers import ascii_number

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = ["COOKBOOK_MISSING", "CookbookAppMissing", "CookbookClient", "Recipe", "RecipeSummary"]

API = "/index.php/apps/cookbook/api/v1"
COOKBOOK_MISSING = "Cookbook is not installed or not enabled for you on this Nextcloud"


class CookbookAppMissing(NotFound):
    """Cookbook's paths answered Nextcloud's own 404 page: no Cookbook for this user."""


def _texts(value: Any) -> list[str]:
    """A schema.org list field: a list of texts (or of `HowToStep`s), a single text, or nothing."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if not isinstance(value, list):
        return []
    out: list[str] = []
    for item in value:
        if isinstance(item, dict):
            item = item.get("text") or item.get("name") or ""
        if isinstance(item, str | int | float) and str(item).strip():
            out.append(str(item))
    return out


class RecipeSummary(AppModel):
    id: int = Field(alias="recipe_id")
    name: str = ""
    category: str = ""
    keywords: str = ""
    modified: str = Field(default="", alias="dateModified")

    _plain = field_validator("name", "category", "keywords", "modified", mode="before")(plain_text)


class Recipe(AppModel):
    id: int
    name: str = ""
    description: str = ""
    category: str = Field(default="", alias="recipeCategory")
    keywords: str = ""
    recipe_yield: str = Field(default="", alias="recipeYield")
    prep_time: str = Field(default="", alias="prepTime")
    cook_time: str = Field(default="", alias="cookTime")
    total_time: str = Field(default="", alias="totalTime")
    url: str = ""
    ingredients: list[str] = Field(default_factory=list, alias="recipeIngredient")
    instructions: list[str] = Field(default_factory=list, alias="recipeInstructions")
    tools: list[str] = Field(default_factory=list, alias="tool")
    modified: str = Field(default="", alias="dateModified")
    raw: dict[str, Any] = Field(default_factory=dict, exclude=True)

    _plain = field_validator(
        "name",
        "description",
        "category",
        "keywords",
        "recipe_yield",
        "prep_time",
        "cook_time",
        "total_time",
        "url",
        "modified",
        mode="before",
    )(plain_text)
    _lists = field_validator("ingredients", "instructions", "tools", mode="before")(_texts)


_SUMMARIES = TypeAdapter(list[RecipeSummary])


def _is_json(body: str) -> bool:
    """Cookbook answers its refusals in JSON; Nextcloud's own 404 page (no such app) is HTML."""
    try:
        json.loads(body[:8192])
    except (ValueError, RecursionError):
        return False
    return True


def _special(exc: NextcloudHTTPError, said: str, what: str) -> NextcloudError | None:
    if exc.status == 404 and not _is_json(exc.body):
        return CookbookAppMissing(exc.host, COOKBOOK_MISSING, status=404, body=exc.body)
    if exc.status == 404:
        return NotFound(exc.host, f"{what} does not exist", status=404)
    if exc.status == 409:
        return error_for_status(
            exc.host, 409, exc.body, f"Cookbook refused: {said or 'a conflict'}: choose another name"
        )
    return None


class CookbookClient:
    """The Cookbook API for one user."""

    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._api = AppAPI(
            http,
            credential,
            API,
            app="Cookbook",
            missing=COOKBOOK_MISSING,
            words=(("msg",), ()),
            special=_special,
        )

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    @property
    def host(self) -> str:
        return self._api.host

    async def _call(self, method: str, path: str, what: str, body: Any = None) -> Any:
        return await self._api.call(method, path, what, body=body)

    async def recipes(self, words: str | None = None) -> list[RecipeSummary]:
        """Every recipe, or those whose name, keywords or category match `words`."""
        # Nextcloud routes an encoded slash as a separator (a 405): a search's words are words
        words = " ".join((words or "").replace("/", " ").split())
        path = f"/search/{quote(words, safe='')}" if words else "/recipes"
        try:
            found: list[RecipeSummary] = _SUMMARIES.validate_python(
                await self._call("GET", path, "the recipes")
            )
        except ValidationError:
            raise InvalidResponse(self.host, "Cookbook's answer is not a list of recipes") from None
        return found

    async def recipe(self, recipe_id: int) -> Recipe:
        payload = await self._call("GET", f"/recipes/{recipe_id}", f"recipe {recipe_id}")
        if not isinstance(payload, dict):
            raise InvalidResponse(self.host, "Cookbook's answer is not a recipe")
        try:
            return Recipe.model_validate({**payload, "raw": payload})
        except ValidationError:
            raise InvalidResponse(self.host, "Cookbook's answer is not a recipe") from None

    async def create(self, fields: dict[str, Any]) -> int:
        """Store a new recipe (schema.org fields); its id."""
        created = await self._call("POST", "/recipes", "the recipe", body={"@type": "Recipe", **fields})
        if isinstance(created, int | str) and (number := ascii_number(str(created))) is not None:
            return number
        raise InvalidResponse(self.host, "Cookbook did not answer the new recipe's id")

    async def replace(self, recipe: Recipe, fields: dict[str, Any]) -> None:
        """Write `recipe` back whole (as read) with `fields` changed."""
        body = {**recipe.raw, **fields, "id": str(recipe.id)}
        await self._call("PUT", f"/recipes/{recipe.id}", f"recipe {recipe.id}", body=body)

    async def delete(self, recipe_id: int) -> None:
        await self._call("DELETE", f"/recipes/{recipe_id}", f"recipe {recipe_id}")
