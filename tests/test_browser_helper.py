"""The browser helper's promise: every page a person is shown has a screenshot, or the test fails."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.routing import Route

from tests.browser import Browser, Screenshots
from tests.nextcloud_double.server import serve_in_thread

pytestmark = pytest.mark.browser


@pytest.fixture
def site() -> Iterator[str]:
    async def first(_: object) -> HTMLResponse:
        return HTMLResponse("<!doctype html><title>one</title><h1>First page</h1>")

    async def second(_: object) -> HTMLResponse:
        return HTMLResponse("<!doctype html><title>two</title><h1>Second page</h1>")

    async def hop(_: object) -> RedirectResponse:
        return RedirectResponse("/first", status_code=303)

    app = Starlette(routes=[Route("/first", first), Route("/second", second), Route("/hop", hop)])
    with serve_in_thread(app, lifespan="off") as base:
        yield base


async def test_each_page_shown_is_saved_and_redirects_are_not_pages(
    site: str, browser: Browser, screenshots: Screenshots
) -> None:
    async with browser.person("ann", screenshots) as ann:
        seen = await ann.open(f"{site}/hop", "after a redirect")
    assert (seen.status, seen.title, seen.url) == (200, "one", f"{site}/first")
    assert "First page" in seen.text
    assert [p.name for p in screenshots.taken] == ["01-ann-after-a-redirect.png"]
    assert seen.screenshot.read_bytes().startswith(b"\x89PNG")


async def test_a_page_shown_without_a_screenshot_fails_the_test(
    site: str, browser: Browser, screenshots: Screenshots
) -> None:
    async def look_away() -> None:
        async with browser.person("ann", screenshots) as ann:
            await ann.open(f"{site}/first", "first")
            await browser.run(ann.page.goto, f"{site}/second")  # shown, never captured

    with pytest.raises(AssertionError, match="saw pages without a screenshot"):
        await look_away()
