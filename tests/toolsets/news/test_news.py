"""The News toolset end to end: the SDK's client, the server, and the real News 25.3.1 (Nextcloud
29) and 28.7.0 (Nextcloud 34) subscribing to a real RSS file this test serves on loopback (News
fetches it from Nextcloud); every change is checked through News' own API."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.toolsets.news.tools import checked_feed_url, plain
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured

API = "/index.php/apps/news/api/v1-3"
TOOLS = {
    "nc_news_list_feeds": ("news:read", True),
    "nc_news_add_feed": ("news:write", False),
    "nc_news_list_items": ("news:read", True),
    "nc_news_mark_items": ("news:write", False),
}
RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Kitchen news</title><link>http://127.0.0.1/</link>
<description>What is cooking</description>
<item><title>Pancake day</title><link>http://127.0.0.1/pancakes</link><guid>pancakes-1</guid>
<description>&lt;p&gt;Flip &lt;b&gt;them&lt;/b&gt; &amp;amp; serve&lt;/p&gt;</description>
<pubDate>Sat, 28 Nov 2026 08:00:00 GMT</pubDate></item>
<item><title>Soup season</title><link>http://127.0.0.1/soup</link><guid>soup-1</guid>
<description>Warm</description><pubDate>Fri, 27 Nov 2026 08:00:00 GMT</pubDate></item>
</channel></rss>"""


class _Feed(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        found = self.path == "/kitchen.xml"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/rss+xml")
        self.end_headers()
        self.wfile.write(RSS if found else b"")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def feed_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Feed)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _api(nextcloud: Nextcloud, path: str, **params: Any) -> Any:
    with nextcloud.http(nextcloud.alice) as http:
        got = http.get(f"{API}{path}", params=params, headers={"Accept": "application/json"})
    assert got.status_code == 200, got.text[:300]
    return got.json()


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://x/y", "http:///x", "https://a b/feed"])
def test_only_web_links_are_subscribed(url: str) -> None:
    with pytest.raises(InvalidInput):
        checked_feed_url(url)


def test_articles_are_plain_text_and_bounded() -> None:
    assert plain("<p>Flip <b>them</b> &amp; serve</p>") == "Flip them & serve"
    assert plain("<script>x</script>" + "a" * 5_000, 10) == "x aaaaaaa…"


async def test_subscribe_read_and_mark_articles(apps_nextcloud: Nextcloud, feed_server: str) -> None:
    nc = apps_nextcloud
    config = nc.settings(nc.alice, nextcloud_mcp_toolsets="news")
    with running_app(config) as base:
        async with http_session(f"{base}/mcp") as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == set(TOOLS)
            for name, (scope, read_only) in TOOLS.items():
                assert tools[name].meta is not None
                assert tools[name].meta["nextcloud-mcp/scopes"] == [scope]
                assert tools[name].annotations is not None
                assert tools[name].annotations.read_only_hint is read_only

            added = structured(
                await session.call_tool(
                    "nc_news_add_feed", {"url": f"{feed_server}/kitchen.xml", "folder": "Food"}
                )
            )
            assert (added["title"], added["folder"]) == ("Kitchen news", "Food")
            [feed] = _api(nc, "/feeds")["feeds"]
            [folder] = _api(nc, "/folders")["folders"]
            assert (feed["url"], feed["folderId"], folder["name"]) == (
                f"{feed_server}/kitchen.xml",
                folder["id"],
                "Food",
            )
            missing = await session.call_tool("nc_news_add_feed", {"url": f"{feed_server}/nothing.xml"})
            assert missing.is_error
            assert "News refused" in str(missing.content[0].text)  # type: ignore[union-attr]
            # a folder made for a feed News refuses is not left behind; a blank one is not made
            refused = await session.call_tool(
                "nc_news_add_feed", {"url": f"{feed_server}/nothing.xml", "folder": "Ghost"}
            )
            blank = await session.call_tool(
                "nc_news_add_feed", {"url": f"{feed_server}/kitchen.xml", "folder": "   "}
            )
            assert refused.is_error
            assert blank.is_error
            assert "needs a name" in str(blank.content[0].text)  # type: ignore[union-attr]
            assert [f["name"] for f in _api(apps_nextcloud, "/folders")["folders"]] == ["Food"]

            listed = structured(await session.call_tool("nc_news_list_feeds", {}))
            assert [(f["title"], f["folder"]) for f in listed["feeds"]] == [("Kitchen news", "Food")]
            items = structured(await session.call_tool("nc_news_list_items", {"feed_id": feed["id"]}))[
                "items"
            ]
            assert [(i["title"], i["text"]) for i in items] == [
                ("Pancake day", "Flip them & serve"),
                ("Soup season", "Warm"),
            ]
            pancakes = items[0]["id"]
            structured(
                await session.call_tool(
                    "nc_news_mark_items", {"item_ids": [pancakes], "read": True, "starred": True}
                )
            )
            stored = {
                i["id"]: i for i in _api(nc, "/items", type=3, id=0, getRead="true", batchSize=10)["items"]
            }
            assert (stored[pancakes]["unread"], stored[pancakes]["starred"]) == (False, True)
            unread = structured(await session.call_tool("nc_news_list_items", {"folder_id": folder["id"]}))[
                "items"
            ]
            assert [i["title"] for i in unread] == ["Soup season"]
            starred = structured(await session.call_tool("nc_news_list_items", {"starred": True}))["items"]
            assert [i["id"] for i in starred] == [pancakes]
