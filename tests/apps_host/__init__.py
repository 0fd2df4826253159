"""The MCP Apps test host (host.js) in a person's Chromium, served beside this server's /mcp.

The page is answered by the browser itself (Playwright routes `<base>/apps-host/`), so it has the
server's own origin and its MCP client reaches `/mcp` without any cross-origin allowance; the
server is not changed for the test. The views run in a sandboxed srcdoc iframe (`#view`).

    host = await AppsHost.open(person, base, script)
    shown = await host.show("nc_calendar_list_events", {...})
    text = await host.view_text("section.day")
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.browser import Person, Seen
from tests.oidc import NODE
from tests.real_nextcloud import REPO

__all__ = ["AppsHost", "bundle_host"]

HERE = Path(__file__).parent
DEADLINE_MS = 60_000  # for one step of the host (a tool call against the real Nextcloud included)
VIEWS_MODULES = REPO / "views" / "node_modules"
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MCP Apps test host</title>
<style>body{font:14px system-ui;margin:16px;background:#f3f4f6}
iframe{width:640px;height:200px;border:1px solid #999;background:#fff;display:block}</style></head>
<body><h1>MCP Apps test host</h1><div id="views"></div><script src="host.js"></script></body></html>"""


def bundle_host(out: Path) -> str:
    """host.js bundled for the browser (esbuild and ext-apps from views/, pinned by its lockfile)."""
    for needed in (NODE, VIEWS_MODULES / "esbuild"):
        if not needed.exists():
            raise RuntimeError(f"{needed} is missing: run `make test` (npm ci in tests/idp and views)")
    target = out / "host.js"
    subprocess.run([str(NODE), str(HERE / "bundle.mjs"), str(target)], check=True, timeout=120)
    return target.read_text(encoding="utf-8")


@dataclass
class AppsHost:
    person: Person
    base: str

    @classmethod
    async def open(cls, person: Person, base: str, script: str) -> tuple[AppsHost, Seen]:
        """Route the host page and its script, open it and connect its MCP client to `<base>/mcp`."""
        prefix = f"{base}/apps-host/"

        def route(page: Any) -> None:
            def answer(route: Any) -> None:
                url = route.request.url
                if url.endswith("/host.js"):
                    route.fulfill(status=200, content_type="text/javascript", body=script)
                else:
                    route.fulfill(status=200, content_type="text/html; charset=utf-8", body=PAGE)

            page.route(f"{prefix}**", answer)

        await person.browser.run(route, person.page)
        seen = await person.open(prefix, "test host")
        host = cls(person, base)
        tools = await host.evaluate("url => appsHost.connect(url)", f"{base}/mcp")
        assert isinstance(tools, list), tools
        assert tools, "the host listed no tools"
        return host, seen

    async def evaluate(self, expression: str, arg: Any = None) -> Any:
        """`expression` (a function of `arg`, maybe async) run in the page, bounded by a deadline:
        a view or a server that never answers fails the test instead of hanging it."""
        bounded = (
            f"arg => Promise.race([Promise.resolve(({expression})(arg)), new Promise((_, reject) => "
            f"setTimeout(() => reject(new Error('no answer within {DEADLINE_MS} ms')), {DEADLINE_MS}))])"
        )
        return await self.person.browser.run(self.person.page.evaluate, bounded, arg)

    async def show(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The view of `tool` rendered, given the input and the tool's result; what the host saw."""
        shown: dict[str, Any] = await self.evaluate(
            "([name, args]) => appsHost.show(name, args)", [tool, arguments]
        )
        return shown

    async def start(self, tool: str, arguments: dict[str, Any]) -> None:
        """As `show`, without waiting for the result (the call may wait for an approval)."""
        await self.evaluate("([name, args]) => appsHost.start(name, args)", [tool, arguments])

    async def finished(self, tool: str) -> dict[str, Any]:
        shown: dict[str, Any] = await self.evaluate("name => appsHost.finished(name)", tool)
        return shown

    async def asked(self, count: int = 1) -> list[str]:
        """The approval questions asked so far, once there are `count` (Playwright's deadline)."""
        await self.person.browser.run(
            self.person.page.wait_for_function, f"() => appsHost.asked().length >= {int(count)}"
        )
        questions: list[str] = await self.evaluate("() => appsHost.asked()")
        return questions

    async def as_person(self, locale: str, time_zone: str, width: int | None = None) -> None:
        """The locale and time zone the next views are told, and the width of their frame."""
        arg = {"locale": locale, "timeZone": time_zone, "width": width}
        await self.evaluate("p => appsHost.person(p)", arg)

    async def answer(self, action: str) -> None:
        await self.evaluate("action => appsHost.answer(action)", action)

    async def view_text(self, ready: str, *, containing: str = "") -> str:
        """The text of the view once `ready` (a selector inside it) is there, and `containing` too."""

        def wait() -> str:
            body = self.person.page.frame_locator("#view").locator("body")
            body.locator(ready).first.wait_for(state="visible")
            if containing:
                body.get_by_text(containing, exact=False).first.wait_for(state="visible")
            return str(body.inner_text())

        return await self.person.browser.run(wait)

    async def view_html(self) -> str:
        def html() -> str:
            return str(self.person.page.frame_locator("#view").locator("html").evaluate("e => e.outerHTML"))

        return await self.person.browser.run(html)

    async def screenshot(self, what: str) -> Path:
        """The page with its view as the person sees it now, kept with the test's screenshots."""
        path = self.person.shots.next_path(self.person.name, what)

        def take() -> None:
            self.person.page.screenshot(path=str(path), full_page=True)

        await self.person.browser.run(take)
        return path


def structured_of(result: dict[str, Any]) -> tuple[list[str], Any]:
    """The text parts and the structured content of a tool result as JSON (for comparisons)."""
    texts = [part["text"] for part in result.get("content", []) if part.get("type") == "text"]
    return texts, json.loads(json.dumps(result.get("structuredContent")))
