"""`make views-preview` as a person uses it: the page is served beside /mcp by the same process,
in front of the demo's seeded stand-in Nextcloud; in Chromium the example buttons render the
agenda and an approval preview, the question comes with Decline and Approve buttons, and
declining changes nothing."""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from nextcloud_mcp_server.app import create_app
from tests.browser import Browser, Screenshots
from tests.nextcloud_double.server import serve_in_thread
from tests.views_preview import PREFIX, _demo, with_host_page

pytestmark = [pytest.mark.integration, pytest.mark.browser]


async def test_the_preview_page_shows_the_views_against_the_demo(
    browser: Browser, screenshots: Screenshots, host_script: str
) -> None:
    with ExitStack() as stack:
        settings = _demo(stack)
        base = stack.enter_context(serve_in_thread(with_host_page(create_app(settings), host_script)))
        async with browser.person("demo", screenshots) as person:
            await person.open(f"{base}{PREFIX}", "preview page")

            def agenda() -> str:
                page = person.page
                page.get_by_role("button", name="Agenda: the next 7 days").click()
                view = page.frame_locator("#view").locator("body")
                view.locator("section.day").first.wait_for(state="visible")
                return str(view.inner_text())

            def delete_and_decline() -> tuple[str, str, str]:
                page = person.page
                page.get_by_role("button", name="Delete the folder Projects?").click()
                page.locator("#question").wait_for(state="visible")
                view = page.frame_locator("#view").locator("body")
                view.locator("h1").first.wait_for(state="visible")
                heading = str(view.locator("h1").first.inner_text())
                asked = str(page.locator("#message").inner_text())
                page.get_by_role("button", name="Decline").click()
                view.locator("p.outcome").wait_for(state="visible")
                return heading, asked, str(view.locator("p.outcome").inner_text())

            shown = await person.browser.run(agenda)
            heading, asked, outcome = await person.browser.run(delete_and_decline)
            await person.browser.run(
                lambda: person.page.screenshot(path=str(person.shots.next_path("demo", "declined")))
            )
    assert "Project kickoff" in shown, shown
    assert heading == "Delete the folder 'Projects'?"
    assert asked.startswith("Delete the folder /Projects"), asked
    assert "declined" in outcome, outcome
