"""A person's browser for the tests: Playwright driving Debian's Chromium (never a downloaded one).

One Chromium runs per test session, on a thread of its own (Playwright's sync API), so async tests
can drive an MCP client and a browser at once. Each person gets a fresh browser context: browsers
share cookies between ports of 127.0.0.1, so two people must never share one. Every page a person
sees is saved as test-artifacts/screenshots/<test>/NN-<person>-<what>.png, and a page that was
shown but not captured fails the test.

    async with browser.person("alice", shots) as alice:
        seen = await alice.open(url, "consent link")
        seen = await alice.click("Log in", "login form")
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tests.real_nextcloud import REPO

__all__ = ["CHROMIUM", "Browser", "Person", "Screenshots", "Seen"]

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package (tests/system-packages.txt)
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = REPO / "test-artifacts" / "screenshots"
STEP_TIMEOUT_MS = 30_000
T = TypeVar("T")


class Screenshots:
    """The numbered screenshots of one test, in test-artifacts/screenshots/<test>/."""

    def __init__(self, test_name: str) -> None:
        self.dir = ARTIFACTS / re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name).strip("_")
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.taken: list[Path] = []

    def next_path(self, person: str, what: str) -> Path:
        slug = re.sub(r"[^a-z0-9]+", "-", f"{person} {what}".lower()).strip("-")
        path = self.dir / f"{len(self.taken) + 1:02d}-{slug}.png"
        self.taken.append(path)
        return path


@dataclass(frozen=True)
class Seen:
    """A page as the person saw it: final URL, HTTP status and headers of its document, the
    visible text, and where its screenshot is."""

    url: str
    status: int
    headers: dict[str, str]
    title: str
    text: str
    screenshot: Path


@dataclass
class _Shown:
    """A document shown in the main frame (not a redirect), and whether it was captured."""

    response: Any
    captured: bool = False


@dataclass
class Person:
    """One person's browser context and tab. Methods run on the browser's thread."""

    name: str
    browser: Browser
    shots: Screenshots
    context: Any = None
    page: Any = None
    shown: list[_Shown] = field(default_factory=list)
    console: list[str] = field(default_factory=list)  # what the pages logged (CSP violations...)

    def _on_response(self, response: Any) -> None:
        # no Playwright round trips in an event handler: only remember the response
        request = response.request
        main = request.is_navigation_request() and request.frame.parent_frame is None
        if main and not 300 <= response.status < 400:
            self.shown.append(_Shown(response))

    def _capture(self, what: str) -> Seen:
        page = self.page
        page.wait_for_load_state("load")
        uncaptured = [s for s in self.shown if not s.captured]
        assert uncaptured, f"{self.name}: no new page was shown before {what!r} ({page.url})"
        assert len(uncaptured) == 1, (
            f"{self.name}: pages shown without a screenshot: {[s.response.url for s in uncaptured[:-1]]}"
        )
        shown = uncaptured[0]
        shown.captured = True
        path = self.shots.next_path(self.name, what)
        page.screenshot(path=str(path), full_page=True)
        return Seen(
            url=page.url,
            status=shown.response.status,
            headers=shown.response.all_headers(),
            title=page.title(),
            text=page.inner_text("body"),
            screenshot=path,
        )

    def _style(self, selector: str, prop: str) -> str:
        return str(self.page.eval_on_selector(selector, f"e => getComputedStyle(e)[{prop!r}]"))

    def _open(self, url: str, what: str) -> Seen:
        self.page.goto(url, wait_until="load")
        return self._capture(what)

    def _click(self, name: str, what: str) -> Seen:
        with self.page.expect_navigation(wait_until="load"):
            self.page.get_by_role("button", name=name, exact=True).click()
        return self._capture(what)

    def _sign_in(self, user: str, password: str, what: str) -> Seen:
        page = self.page
        page.locator("input[name=user]").fill(user)
        page.locator("input[name=password]").fill(password)
        with page.expect_navigation(wait_until="load"):
            page.locator("input[name=password]").press("Enter")
        return self._capture(what)

    async def open(self, url: str, what: str) -> Seen:
        """Type `url` into the address bar; the page it ends on."""
        return await self.browser.run(self._open, url, what)

    async def click(self, button: str, what: str) -> Seen:
        """Click the button labelled `button`; the page that follows."""
        return await self.browser.run(self._click, button, what)

    async def style(self, selector: str, prop: str) -> str:
        """The computed CSS `prop` of the first element matching `selector` on the current page."""
        return await self.browser.run(self._style, selector, prop)

    async def sign_in(self, user: str, password: str, what: str = "after sign-in") -> Seen:
        """Fill Nextcloud's login form and submit it; the page that follows."""
        return await self.browser.run(self._sign_in, user, password, what)

    def _start(self) -> None:
        self.context = self.browser.chromium.new_context(
            locale="en-US", viewport={"width": 1000, "height": 800}
        )
        self.context.set_default_timeout(STEP_TIMEOUT_MS)
        self.page = self.context.new_page()
        self.page.on("response", self._on_response)
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))

    def _last_look(self) -> None:
        """After a failure: what the page showed (not numbered; the test already failed)."""
        with contextlib.suppress(Exception):  # a diagnostic only; the test's own error is what counts
            self.page.screenshot(path=str(self.shots.dir / f"failed-{self.name}.png"), full_page=True)

    def _close(self) -> list[str]:
        self.context.close()
        return [s.response.url for s in self.shown if not s.captured]


class Browser:
    """Debian's Chromium under Playwright, on one thread of its own."""

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chromium")
        self._playwright: Any = None
        self.chromium: Any = None

    def _launch(self) -> None:
        from playwright.sync_api import sync_playwright

        if not CHROMIUM.exists():
            raise RuntimeError(f"{CHROMIUM} is missing: run `make test` (it installs Debian's chromium)")
        self._playwright = sync_playwright().start()
        self.chromium = self._playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)

    def _stop(self) -> None:
        if self.chromium is not None:
            self.chromium.close()
        if self._playwright is not None:
            self._playwright.stop()

    def start(self) -> Browser:
        self._thread.submit(self._launch).result()
        return self

    def stop(self) -> None:
        try:
            self._thread.submit(self._stop).result()
        finally:
            self._thread.shutdown()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.wrap_future(self._thread.submit(fn, *args))

    @asynccontextmanager
    async def person(self, name: str, shots: Screenshots) -> AsyncIterator[Person]:
        """A fresh browser context (own cookies) for one person; checks on exit that every page it
        was shown has a screenshot."""
        person = Person(name, self, shots)
        await self.run(person._start)
        failed = False
        try:
            yield person
        except BaseException:
            failed = True
            await self.run(person._last_look)
            raise
        finally:
            uncaptured = await self.run(person._close)
            if not failed:
                assert not uncaptured, f"{name} saw pages without a screenshot: {uncaptured}"
