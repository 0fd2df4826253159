"""Render the extension's icon (packaging/mcpb/icon.png, 512x512) from the server's own light icon
(nextcloud_mcp_server/icons/nextcloud-light.svg), through Debian's Chromium. Run by hand after the
SVG changes, and commit the PNG: `.venv/bin/python packaging/mcpb/render_icon.py`. (Claude Desktop
shows a PNG; the build needs no browser.)"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
SVG = ROOT / "nextcloud_mcp_server" / "icons" / "nextcloud-light.svg"
PNG = Path(__file__).resolve().parent / "icon.png"


def main() -> None:
    svg = SVG.read_text().replace("<svg ", "<svg width='400' height='400' ", 1)
    tile = (
        "width:512px;height:512px;background:#fff;border-radius:96px;"
        "display:flex;align-items:center;justify-content:center"
    )
    body = f"<div style='{tile}'>{svg}</div>"
    html = f"<html><body style='margin:0;background:transparent'>{body}</body></html>"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page(viewport={"width": 512, "height": 512})
        page.set_content(html)
        page.screenshot(path=str(PNG), omit_background=True)
        browser.close()


if __name__ == "__main__":
    main()
