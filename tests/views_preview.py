"""`make views-preview`: see the MCP Apps views in a browser, outside the tests.

    python -m tests.views_preview [--configured] [--port N] [--no-browser]

Serves this server's `/mcp` and, on the same origin, a small MCP Apps host page (the test host,
tests/apps_host/host.js, with buttons): pick an example or any tool that links a view, and the view
renders as a chat host would render it, with your browser's locale and time zone. Approval
questions are shown with Decline and Approve buttons; Approve really does it.

By default against the demo's stand-in Nextcloud (seeded as `make demo` seeds it, in a temporary
folder); with --configured against the Nextcloud of your configuration (.env and the environment,
as `nextcloud-mcp-bridge run` reads it; single-user app password). Opens your browser when one
is found, and prints the URL either way. Runs until Ctrl-C.
"""

from __future__ import annotations

import argparse
import datetime as dt
import secrets
import sys
import tempfile
import threading
import webbrowser
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from nextcloud_mcp_server.app import create_app
from nextcloud_mcp_server.config.settings import Settings, load_settings
from tests.apps_host import bundle_host
from tests.demo_data import USERNAME, seed
from tests.nextcloud_double import Account, NextcloudDouble
from tests.nextcloud_double.server import serve_in_thread

__all__ = ["main"]

PREFIX = "/views-preview/"
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
PAGE = (Path(__file__).parent / "apps_host" / "preview.html").read_text(encoding="utf-8")


def with_host_page(app: Any, script: str) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """`app`, and beside it the host page and its script under PREFIX (same origin as /mcp, so the
    page's MCP client needs no cross-origin allowance; the server itself is unchanged)."""
    files = {PREFIX: ("text/html; charset=utf-8", PAGE), f"{PREFIX}host.js": ("text/javascript", script)}

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in files:
            kind, body = files[scope["path"]]
            data = body.encode("utf-8")
            headers = [(b"content-type", kind.encode()), (b"cache-control", b"no-store")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": data})
            return
        await app(scope, receive, send)

    return serve


def _demo(stack: ExitStack) -> Settings:
    """The demo's stand-in Nextcloud, seeded, in a temporary folder removed on exit."""
    root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="nextcloud-views-preview-")))
    password = secrets.token_urlsafe(24)
    account = Account(USERNAME, secrets.token_urlsafe(24), display_name="Demo User", app_passwords={password})
    url = stack.enter_context(serve_in_thread(NextcloudDouble(root / "nextcloud", [account]), lifespan="off"))
    with httpx.Client(base_url=url, auth=(USERNAME, password), timeout=10) as client:
        seed(client, dt.datetime.now(dt.UTC).date())
    return load_settings(
        env_file=None, nextcloud_host=url, nextcloud_username=USERNAME, nextcloud_password=password
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.views_preview", description=__doc__.split("\n")[0])
    parser.add_argument("--configured", action="store_true", help="your configured Nextcloud, not the demo's")
    parser.add_argument("--port", type=int, default=0, help="the local port (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="only print the URL")
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        settings = load_settings() if args.configured else _demo(stack)
        script = bundle_host(Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="views-host-"))))
        app = with_host_page(create_app(settings), script)
        base = stack.enter_context(serve_in_thread(app, port=args.port))
        url = f"{base}{PREFIX}"
        where = "the demo's stand-in Nextcloud" if not args.configured else settings.nextcloud_host
        print(f"The views, against {where}: {url}\n(Ctrl-C stops it)", flush=True)
        if not args.no_browser and not webbrowser.open(url):
            print("No browser found here: open the URL above in yours.", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("\nStopped.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
