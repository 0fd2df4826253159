"""Cookbook toolset: the recipes of the Cookbook app. A recipe is read and written whole (the app
replaces it on every update), so an update is bound to the version read, and one that removes most
of a recipe's text asks first; deleting asks, bound to what was shown. A recipe's `url` is stored
as its source and never fetched."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, PreconditionFailed
from nextcloud_mcp_server.nextcloud.names import check_visible
from nextcloud_mcp_server.tools._approval import approve_removal, refuse_changed, require_approval, shrinks
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.tools._results import answer, stale_version
from nextcloud_mcp_server.tools._shown import bound_version, shown_text
from nextcloud_mcp_server.toolsets.cookbook import DECLARATION
from nextcloud_mcp_server.toolsets.cookbook.client import CookbookClient, Recipe
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("cookbook")

RecipeId = Annotated[int, Field(ge=1, le=2**53, description="The recipe's id, as listed")]
Name = Annotated[str, Field(min_length=1, max_length=200, description="Unique among your recipes")]
Lines = Annotated[list[Annotated[str, Field(max_length=2_000)]], Field(max_length=200)]
Minutes = Annotated[int, Field(ge=0, le=100_000)]
MAX_TEXT = 20_000  # characters of a description
MAX_LISTED = 200
SHOWN_TEXT = 4_000  # characters of each long field in an answer


class RecipeOut(BaseModel):
    id: int
    name: str
    category: str
    keywords: str
    modified: str


class RecipeList(BaseModel):
    recipes: list[RecipeOut]
    total: int = Field(description="Recipes found before limit/offset")
    next_offset: int | None = None


class RecipeDetail(BaseModel):
    id: int
    name: str
    description: str
    category: str
    keywords: str
    servings: str
    prep_time: str = Field(description="ISO 8601 duration (PT0H10M0S), or empty")
    cook_time: str
    url: str = Field(description="Where the recipe came from (never fetched)")
    ingredients: list[str]
    instructions: list[str]
    version: str = Field(description="Pass to nc_cookbook_update_recipe")
    cut: bool = Field(description="True when a long text or list was cut in this answer")


class DeletedRecipe(BaseModel):
    id: int
    name: str


def _version(recipe: Recipe) -> str:
    return bound_version(recipe.modified or "-", recipe.raw)


def _detail(recipe: Recipe) -> RecipeDetail:
    ingredients, instructions = recipe.ingredients[:MAX_LISTED], recipe.instructions[:MAX_LISTED]
    cut = len(recipe.ingredients) > MAX_LISTED or len(recipe.instructions) > MAX_LISTED
    texts = [*ingredients, *instructions, recipe.description]
    cut = cut or any(len(text) > SHOWN_TEXT for text in texts)
    return RecipeDetail(
        id=recipe.id,
        name=recipe.name,
        description=recipe.description[:SHOWN_TEXT],
        category=recipe.category,
        keywords=recipe.keywords,
        servings=recipe.recipe_yield,
        prep_time=recipe.prep_time,
        cook_time=recipe.cook_time,
        url=recipe.url[:2_000],
        ingredients=[line[:SHOWN_TEXT] for line in ingredients],
        instructions=[line[:SHOWN_TEXT] for line in instructions],
        version=_version(recipe),
        cut=cut,
    )


def _fields(
    *,
    name: str | None,
    description: str | None,
    ingredients: list[str] | None,
    instructions: list[str] | None,
    category: str | None,
    keywords: list[str] | None,
    servings: int | None,
    prep_minutes: int | None,
    cook_minutes: int | None,
    source_url: str | None,
) -> dict[str, Any]:
    """The given arguments as Cookbook's schema.org fields, each checked."""
    out: dict[str, Any] = {}
    if name is not None:
        if not name.strip() or "/" in name or "\\" in name:
            raise InvalidInput("a recipe's name needs a visible character and no '/' or '\\'")
        check_visible(name, "the recipe's name")
        out["name"] = name.strip()
    if description is not None:
        if len(description) > MAX_TEXT:
            raise InvalidInput(f"the description is longer than {MAX_TEXT:,} characters")
        out["description"] = description
    if ingredients is not None:
        out["recipeIngredient"] = [line.strip() for line in ingredients if line.strip()]
    if instructions is not None:
        out["recipeInstructions"] = [line.strip() for line in instructions if line.strip()]
    if category is not None:
        check_visible(category, "the category")
        out["recipeCategory"] = category.strip()
    if keywords is not None:
        if any("," in word for word in keywords):
            raise InvalidInput("give each keyword on its own, without commas")
        for word in keywords:
            check_visible(word, "a keyword")
        out["keywords"] = ",".join(word.strip() for word in keywords if word.strip())
    if servings is not None:
        out["recipeYield"] = servings
    if prep_minutes is not None:
        out["prepTime"] = f"PT{prep_minutes // 60}H{prep_minutes % 60}M0S"
    if cook_minutes is not None:
        out["cookTime"] = f"PT{cook_minutes // 60}H{cook_minutes % 60}M0S"
    if source_url is not None:
        if source_url and not source_url.startswith(("https://", "http://")):
            raise InvalidInput("source_url must start with https:// or http:// (it is only stored)")
        out["url"] = source_url
    return out


RECIPE_ARGUMENTS = tuple(inspect.signature(_fields).parameters)


def _recipe_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """The recipe's own arguments among a tool's (its `locals()` before anything else is set):
    adding and updating a recipe take the same ones, read the same way by `_fields`."""
    return {name: arguments[name] for name in RECIPE_ARGUMENTS}


Text = Annotated[str | None, Field(max_length=MAX_TEXT)]
Short = Annotated[str | None, Field(max_length=100)]
Keywords = Annotated[list[Annotated[str, Field(max_length=50)]] | None, Field(max_length=30)]
Url = Annotated[str | None, Field(max_length=2_000, description="The recipe's source, stored only")]


@toolset.tool(title="List recipes", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_cookbook_list_recipes(
    ctx: Context[Any, Any],
    query: Annotated[
        str | None, Field(max_length=200, description="Words in names, keywords, categories")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=MAX_LISTED)] = 50,
    offset: Annotated[int, Field(ge=0, le=100_000)] = 0,
) -> RecipeList:
    """List your recipes, newest change first, or those whose name, keywords or category match."""
    nc = await nextcloud_for(ctx)
    found = await nc.api(CookbookClient).recipes(query.strip() if query and query.strip() else None)
    found.sort(key=lambda r: (r.modified, r.id), reverse=True)
    page = found[offset : offset + limit]
    recipes = [
        RecipeOut(
            id=r.id,
            name=r.name[:200],
            category=r.category[:100],
            keywords=r.keywords[:300],
            modified=r.modified,
        )
        for r in page
    ]
    more = offset + limit if offset + limit < len(found) else None
    return RecipeList(recipes=recipes, total=len(found), next_offset=more)


@toolset.tool(title="Get a recipe", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_cookbook_get_recipe(recipe_id: RecipeId, ctx: Context[Any, Any]) -> RecipeDetail:
    """A recipe whole: ingredients, instructions, times, and its version for an update."""
    nc = await nextcloud_for(ctx)
    return _detail(await nc.api(CookbookClient).recipe(recipe_id))


@toolset.tool(title="Add a recipe")
@require_scopes(DECLARATION.write)
async def nc_cookbook_create_recipe(
    name: Name,
    ctx: Context[Any, Any],
    ingredients: Lines | None = None,
    instructions: Lines | None = None,
    description: Text = None,
    category: Short = None,
    keywords: Keywords = None,
    servings: Annotated[int | None, Field(ge=1, le=10_000)] = None,
    prep_minutes: Minutes | None = None,
    cook_minutes: Minutes | None = None,
    source_url: Url = None,
) -> RecipeDetail:
    """Add a recipe from its fields (one ingredient and one step per line)."""
    fields = _fields(**_recipe_arguments(locals()))
    nc = await nextcloud_for(ctx)
    cookbook = nc.api(CookbookClient)
    return _detail(await cookbook.recipe(await cookbook.create(fields)))


@toolset.tool(title="Update a recipe", idempotent=True, view=APPROVAL)
@require_scopes(DECLARATION.write)
async def nc_cookbook_update_recipe(
    recipe_id: RecipeId,
    version: Annotated[str, Field(min_length=1, max_length=300, description="As read by get_recipe")],
    ctx: Context[Any, Any],
    name: Annotated[str | None, Field(min_length=1, max_length=200)] = None,
    ingredients: Lines | None = None,
    instructions: Lines | None = None,
    description: Text = None,
    category: Short = None,
    keywords: Keywords = None,
    servings: Annotated[int | None, Field(ge=1, le=10_000)] = None,
    prep_minutes: Minutes | None = None,
    cook_minutes: Minutes | None = None,
    source_url: Url = None,
) -> Annotated[CallToolResult, RecipeDetail]:
    """Change only the given fields (a list replaces the whole list). If the recipe changed since
    `version` was read, nothing is written. Emptying or cutting most of its text asks first."""
    fields = _fields(**_recipe_arguments(locals()))
    if not fields:
        raise InvalidInput("give at least one field to change")
    nc = await nextcloud_for(ctx)
    cookbook = nc.api(CookbookClient)
    current = await cookbook.recipe(recipe_id)
    bound = _version(current)
    target = f'the recipe "{current.name[:100]}"'
    if version.strip() != bound:
        changed = PreconditionFailed(
            cookbook.host,
            f"{target} changed since that version was read; nothing was overwritten",
            status=412,
        )
        return stale_version(changed, "recipe", "current_recipe", _detail(current))
    old = {
        "description": current.description,
        "ingredients": "\n".join(current.ingredients),
        "instructions": "\n".join(current.instructions),
    }
    new = {
        "description": fields.get("description"),
        "ingredients": _joined(fields.get("recipeIngredient")),
        "instructions": _joined(fields.get("recipeInstructions")),
    }
    removed = [key for key in old if new[key] is not None and shrinks(old[key], new[key])]
    tool = "nc_cookbook_update_recipe"
    if removed:
        question = f"Change {target}: empty or cut its {', '.join(removed)} to less than half?"
        asked = await approve_removal(ctx, tool=tool, target=target, question=question, version=bound)
        if asked and _version(await cookbook.recipe(recipe_id)) != bound:
            await refuse_changed(ctx, tool=tool, target=target)
    await cookbook.replace(current, fields)
    return answer(_detail(await cookbook.recipe(recipe_id)))


def _joined(lines: Any) -> str | None:
    return "\n".join(lines) if isinstance(lines, list) else None


@toolset.tool(title="Delete a recipe", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(DECLARATION.write)
async def nc_cookbook_delete_recipe(recipe_id: RecipeId, ctx: Context[Any, Any]) -> DeletedRecipe:
    """Delete a recipe. The user is asked to approve first, seeing its name and size."""
    nc = await nextcloud_for(ctx)
    cookbook = nc.api(CookbookClient)
    recipe = await cookbook.recipe(recipe_id)
    target = f"the recipe {shown_text(recipe.name, 200)}"
    question = (
        f"Delete {target} ({len(recipe.ingredients)} ingredients, {len(recipe.instructions)} steps, "
        f"last changed {recipe.modified or 'unknown'})?"
    )
    tool = "nc_cookbook_delete_recipe"
    version = _version(recipe)
    asked = await require_approval(ctx, tool=tool, target=target, question=question, version=version)
    if asked and _version(await cookbook.recipe(recipe_id)) != version:
        await refuse_changed(ctx, tool=tool, target=target)
    await cookbook.delete(recipe_id)
    return DeletedRecipe(id=recipe.id, name=recipe.name[:200])
