"""What the app bench runs beside this server: the kit's Nextcloud with every app (reset to its
seed state), a real IMAP and SMTP server with a Mail account for alice (Nextcloud 30 and later),
an RSS feed on loopback for News, and a notification for alice before the flow that reads one."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from tests.mail_servers import mail_servers
from tests.real_nextcloud import Kit

__all__ = ["BENCH_DIR", "Bench", "services"]

BENCH_DIR = Path("/var/tmp/nextcloud-mcp-bench")  # noqa: S108 - www-data must traverse it (the kit)
OCS = {"OCS-APIRequest": "true", "Accept": "application/json"}
RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Kitchen news</title><link>http://127.0.0.1/</link>
<description>What is cooking</description>
<item><title>Pancake day</title><link>http://127.0.0.1/pancakes</link><guid>pancakes-1</guid>
<description>Flip them</description><pubDate>Sat, 28 Nov 2026 08:00:00 GMT</pubDate></item>
<item><title>Soup season</title><link>http://127.0.0.1/soup</link><guid>soup-1</guid>
<description>Warm</description><pubDate>Fri, 27 Nov 2026 08:00:00 GMT</pubDate></item>
</channel></rss>"""


class _Feed(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/rss+xml")
        self.end_headers()
        self.wfile.write(RSS)

    def log_message(self, *args: Any) -> None:
        pass


@dataclass
class Bench:
    dir: Path
    config: dict[str, Any]
    major: int
    setup: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return str(self.config["url"])

    @property
    def password(self) -> str:
        return str(self.config["alice"]["app_password"])

    @property
    def versions(self) -> dict[str, Any]:
        return {"nextcloud": self.config.get("version"), "apps": self.config.get("apps")}

    @property
    def flows(self) -> set[str]:
        """The flows this Nextcloud can run: Collectives and Mail are offered from Nextcloud 30 on."""
        names = {"deck", "tables", "talk", "cookbook", "bookmarks", "news", "forms", "polls", "shipped"}
        return names | ({"collectives", "mail"} if self.major >= 30 else set())

    def http(self, user: str = "alice") -> httpx.Client:
        login = self.config[user]
        return httpx.Client(
            base_url=self.url, auth=(login["user"], login["app_password"]), headers=OCS, timeout=60
        )

    def before(self, flow: str) -> None:
        """A file for the reminders and a notification (34 only) before the flow that uses them."""
        if flow == "shipped":
            with self.http() as alice:
                alice.put(
                    "/remote.php/dav/files/alice/bench-reminder.txt", content=b"remind me"
                ).raise_for_status()
        if flow == "shipped" and self.major >= 34:
            with self.http("admin") as admin:
                path = "/ocs/v2.php/apps/notifications/api/v2/admin_notifications/alice"
                admin.post(path, data={"shortMessage": "Bench reminder"}).raise_for_status()


def _start(version: str) -> Bench:
    kit = Kit.locate()
    directory = BENCH_DIR / f"apps-{version}"
    kit.run("start", str(directory), "--version", version, "--apps", "all")
    kit.run("reset", str(directory))
    config = json.loads((directory / "nextcloud.json").read_text())
    return Bench(directory, config, int(str(config["version"]).split(".")[0]))


@contextmanager
def services(version: str) -> Iterator[Bench]:
    bench = _start(version)
    with ExitStack() as stack:
        feed = ThreadingHTTPServer(("127.0.0.1", 0), _Feed)
        threading.Thread(target=feed.serve_forever, daemon=True).start()
        stack.callback(feed.server_close)
        stack.callback(feed.shutdown)
        bench.setup["feed_url"] = f"http://127.0.0.1:{feed.server_address[1]}/kitchen.xml"
        bench.setup["major"] = bench.major
        if bench.major >= 30:
            servers = stack.enter_context(mail_servers())
            with bench.http() as alice:
                made = alice.post(
                    "/index.php/apps/mail/api/accounts", json=servers.account("alice@example.com")
                )
                made.raise_for_status()
        yield bench
