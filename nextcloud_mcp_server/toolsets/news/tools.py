"""News toolset: the News app's feeds, folders and articles. Subscribing makes Nextcloud fetch
the feed (this server never does; Nextcloud refuses local addresses unless its administrator
allowed them); articles are answered as plain text, cut to a bounded length."""

from __future__ import annotations

import contextlib
import html
import re
import time
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import require_scopes
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NextcloudError
from nextcloud_mcp_server.nextcloud.names import check_visible
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.toolsets.news import DECLARATION
from nextcloud_mcp_server.toolsets.news.client import Feed, NewsClient, NewsItem

__all__ = ["toolset"]

toolset = Toolset("news")

MAX_BODY = 1_000  # characters of an article's text in a listing
MAX_ITEMS = 50
MAX_FEEDS = 500
_TAG = re.compile(r"<[^>]{0,2000}>")
_SPACE = re.compile(r"\s+")


class FeedOut(BaseModel):
    id: int
    title: str
    url: str
    folder: str | None
    unread: int
    error: str | None = Field(default=None, description="News' last error fetching it")


class FolderOut(BaseModel):
    id: int
    name: str


class Feeds(BaseModel):
    feeds: list[FeedOut]
    folders: list[FolderOut]


class ItemOut(BaseModel):
    id: int
    feed_id: int
    title: str
    url: str
    author: str
    published: str = Field(description="ISO 8601 UTC")
    text: str = Field(description=f"The article as plain text, at most {MAX_BODY} characters")
    unread: bool
    starred: bool


class ItemList(BaseModel):
    items: list[ItemOut]
    next_before: int | None = Field(default=None, description="Pass as before_id for older articles")


class Marked(BaseModel):
    item_ids: list[int]
    read: bool | None
    starred: bool | None


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(min(max(seconds, 0), 253402300799)))


def plain(body: str, limit: int = MAX_BODY) -> str:
    """An article's HTML as plain text: tags dropped, entities decoded, spaces collapsed, cut."""
    text = _SPACE.sub(" ", html.unescape(_TAG.sub(" ", body[: limit * 20]))).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def checked_feed_url(url: str) -> str:
    url = url.strip()
    scheme, _, rest = url.partition("://")
    if (
        scheme.lower() not in ("http", "https")
        or not rest
        or rest.startswith("/")
        or any(c.isspace() for c in url)
    ):
        raise InvalidInput("a feed's url must be an https:// or http:// link with a host and no spaces")
    check_visible(url, "the url")
    return url


def _feed(feed: Feed, folders: dict[int, str]) -> FeedOut:
    return FeedOut(
        id=feed.id,
        title=feed.title[:300],
        url=feed.url[:2_000],
        folder=folders.get(feed.folder_id) if feed.folder_id else None,
        unread=feed.unread,
        error=feed.error[:300] or None,
    )


def _item(item: NewsItem) -> ItemOut:
    return ItemOut(
        id=item.id,
        feed_id=item.feed_id,
        title=plain(item.title, 300),
        url=item.url[:2_000],
        author=item.author[:200],
        published=_iso(item.published),
        text=plain(item.body),
        unread=item.unread,
        starred=item.starred,
    )


@toolset.tool(title="List news feeds", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_news_list_feeds(ctx: Context[Any, Any]) -> Feeds:
    """Your subscribed feeds with their folders, unread counts and last fetch errors."""
    nc = await nextcloud_for(ctx)
    client = nc.api(NewsClient)
    folders = await client.folders()
    names = {f.id: f.name[:200] for f in folders}
    feeds = [_feed(feed, names) for feed in (await client.feeds())[:MAX_FEEDS]]
    return Feeds(feeds=feeds, folders=[FolderOut(id=i, name=n) for i, n in names.items()])


@toolset.tool(title="Subscribe to a news feed")
@require_scopes(DECLARATION.write)
async def nc_news_add_feed(
    url: Annotated[str, Field(min_length=8, max_length=2_000, description="The RSS or Atom feed's link")],
    ctx: Context[Any, Any],
    folder: Annotated[str | None, Field(min_length=1, max_length=100, description="Made if missing")] = None,
) -> FeedOut:
    """Subscribe to a feed, in a folder if given. Nextcloud fetches it now; one it cannot read is
    refused with News' reason."""
    link = checked_feed_url(url)
    nc = await nextcloud_for(ctx)
    client = nc.api(NewsClient)
    names: dict[int, str] = {}
    folder_id = made = None
    if folder is not None:
        name = folder.strip()
        if not name:  # News made a folder with no name of "   "
            raise InvalidInput("the folder needs a name")
        check_visible(name, "the folder")
        folder_id = {f.name: f.id for f in await client.folders()}.get(name)
        if folder_id is None:
            folder_id = made = (await client.add_folder(name)).id
        names[folder_id] = name
    try:
        feed = await client.add_feed(link, folder_id)
    except NextcloudError:
        if made is not None:  # a folder made for a feed News refused is not left behind
            with contextlib.suppress(NextcloudError):
                await client.delete_folder(made)
        raise
    return _feed(feed, names)


@toolset.tool(title="List news articles", read_only=True)
@require_scopes(DECLARATION.read)
async def nc_news_list_items(
    ctx: Context[Any, Any],
    feed_id: Annotated[int | None, Field(ge=1, le=2**53)] = None,
    folder_id: Annotated[int | None, Field(ge=1, le=2**53)] = None,
    starred: Annotated[bool, Field(description="Only starred articles")] = False,
    unread_only: bool = True,
    limit: Annotated[int, Field(ge=1, le=MAX_ITEMS)] = 20,
    before_id: Annotated[int, Field(ge=0, le=2**53, description="0: the newest")] = 0,
) -> ItemList:
    """Articles, newest first: of one feed, one folder, the starred ones, or all."""
    if sum((feed_id is not None, folder_id is not None, starred)) > 1:
        raise InvalidInput("give at most one of feed_id, folder_id and starred")
    kind, of = (0, feed_id) if feed_id else (1, folder_id) if folder_id else (2, 0) if starred else (3, 0)
    nc = await nextcloud_for(ctx)
    found = await nc.api(NewsClient).items(
        kind, of or 0, unread_only=unread_only and not starred, limit=limit, below=before_id
    )
    items = [_item(i) for i in found[:limit]]
    return ItemList(items=items, next_before=items[-1].id if len(found) >= limit and items else None)


@toolset.tool(title="Mark news articles", idempotent=True)
@require_scopes(DECLARATION.write)
async def nc_news_mark_items(
    item_ids: Annotated[
        list[Annotated[int, Field(ge=1, le=2**53)]], Field(min_length=1, max_length=MAX_ITEMS)
    ],
    ctx: Context[Any, Any],
    read: bool | None = None,
    starred: bool | None = None,
) -> Marked:
    """Mark articles read or unread, starred or not (ids that are not yours are ignored by News)."""
    if read is None and starred is None:
        raise InvalidInput("give read, starred or both")
    nc = await nextcloud_for(ctx)
    client = nc.api(NewsClient)
    ids = list(dict.fromkeys(item_ids))
    actions: list[Literal["read", "unread", "star", "unstar"]] = []
    if read is not None:
        actions.append("read" if read else "unread")
    if starred is not None:
        actions.append("star" if starred else "unstar")
    for action in actions:
        await client.mark(action, ids)
    return Marked(item_ids=ids, read=read, starred=starred)
