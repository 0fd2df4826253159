"""Record what the app APIs of a real Nextcloud answer to the requests our clients send
(`toolsets/talk/client.py`, `toolsets/collectives/client.py`, `toolsets/tables/client.py`), into
tests/fixtures/apps/<29|34>/ in the format of `tests/recordings.py`. Run by hand, never by the suite:

    .venv/bin/python -m tests.record_apps            # both releases (or: 29, 34)

Starts the kit's Nextcloud with its apps (`Kit.locate().start(version, apps=True)`), resets it to
the seed state, then as alice (admin as the other participant): a Talk group conversation with a
mention, a reply and a reaction, and a one-to-one conversation; a collective with a page, a subpage
and a taken title (34; on 29 Collectives 2.18 has no API, so its refusal is recorded); a table
with a column of each kind, a filtered view and rows. Scrubbed:
passwords and app passwords, cookies, the host (127.0.0.1:8080) and Talk's conversation tokens,
which become stable `tok…` names. Nothing here is replayed against the double: the tests read the
answers through our clients (tests/apps/test_recorded_answers.py, test_recorded_tables.py).

Deck and the file apps (trash, versions, tags, comments) are recorded by scripts of their own
(record_deck.py, record_file_apps.py) into tests/fixtures/nextcloud{,34}/; the file apps' runs
here too.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from tests import record_file_apps
from tests.real_nextcloud import Instance, Kit
from tests.recordings import APPS
from tests.toolsets.tables.trip_table import COLUMNS

RECORDED_HOST = "http://127.0.0.1:8080"
OCS = {"OCS-APIRequest": "true", "Accept": "application/json"}
ROOM = "/ocs/v2.php/apps/spreed/api/v4/room"
CHAT = "/ocs/v2.php/apps/spreed/api/v1/chat"
REACTION = "/ocs/v2.php/apps/spreed/api/v1/reaction"
COLLECTIVES = "/ocs/v2.php/apps/collectives/api/v1.0/collectives"
# What TalkClient._chat_page sends besides the cursor and the direction.
QUIET = {"timeout": 0, "setReadMarker": 0, "markNotificationsAsRead": 0, "noStatusUpdate": 1}


class Recorder:
    """Sends requests as admin or alice; `record` also writes the exchange, scrubbed."""

    def __init__(self, instance: Instance, major: str) -> None:
        config = instance.config
        self.url = str(config["url"])
        self.out = APPS / major
        self.out.mkdir(parents=True, exist_ok=True)
        self.secrets = {str(config[u][k]) for u in ("admin", "alice") for k in ("password", "app_password")}
        self.clients = {
            user: httpx.Client(
                base_url=self.url,
                auth=(user, str(config[user]["app_password"])),
                timeout=60,
                headers={"Accept-Encoding": "identity"},  # the body as it came over the wire
            )
            for user in ("admin", "alice")
        }
        self.tokens: dict[str, str] = {}  # Talk conversation token -> its stable name

    def send(
        self,
        method: str,
        path: str,
        *,
        user: str = "alice",
        params: dict[str, Any] | None = None,
        data: Any = None,
    ) -> httpx.Response:
        ocs = path.startswith("/ocs/")
        query = {"format": "json", **(params or {})} if ocs else dict(params or {})
        path += "?" + urlencode(query) if query else ""
        headers = dict(OCS) if ocs else {"Accept": "application/json"}  # REST: what TablesClient sends
        if data is not None:
            headers["Content-Type"] = "application/json"
        body = json.dumps(data) if data is not None else None
        return self.clients[user].request(method, path, headers=headers, content=body)

    def record(
        self,
        name: str,
        method: str,
        path: str,
        *,
        user: str = "alice",
        params: dict[str, Any] | None = None,
        data: Any = None,
    ) -> Any:
        """The exchange written to `<name>.txt`; returns the answer's JSON (None if it has none)."""
        response = self.send(method, path, user=user, params=params, data=data)
        for token in re.findall(r'"token":"([a-z0-9]{4,30})"', response.text):
            self.token(token)  # Talk's conversations: scrubbed from this answer on
        request = response.request
        lines = [f"### REQUEST: {method} {request.url}"]
        for key in ("OCS-APIRequest", "Accept", "Content-Type"):
            if key in request.headers:
                lines += ["### ARG: -H", f"### ARG: {key}: {request.headers[key]}"]
        if request.content:
            lines += ["### ARG: --data-binary", f"### ARG: {request.content.decode()}"]
        lines += ["### ARG: -u", f"### ARG: {user}:REDACTED", "### RESPONSE:"]
        lines.append(f"HTTP/1.1 {response.status_code} {response.reason_phrase}")
        lines += [f"{key}: {value}" for key, value in response.headers.multi_items()]
        text = self.scrub("\n".join(lines) + "\n\n" + response.text)
        (self.out / f"{name}.txt").write_text(text, encoding="utf-8")
        print(f"{self.out.name}/{name}: {response.status_code} ({len(text)} characters)")
        try:
            return response.json()
        except ValueError:
            return None

    def token(self, token: str) -> str:
        """A conversation token, from now on written as `tok1`, `tok2`, ... in the recordings."""
        return self.tokens.setdefault(token, f"tok{len(self.tokens) + 1}")

    def scrub(self, text: str) -> str:
        for url in (self.url, self.url.replace("/", "\\/")):
            text = text.replace(url, RECORDED_HOST.replace("/", "\\/") if "\\" in url else RECORDED_HOST)
        for secret in self.secrets:
            text = text.replace(secret, "REDACTED")
        for token, name in self.tokens.items():
            text = re.sub(rf"\b{re.escape(token)}\b", name, text)
        text = re.sub(r"(?im)^(set-cookie: [^=]+=)[^;\n]*", r"\1REDACTED", text)
        return re.sub(r'"(requesttoken|sessionId)":"[^"]+"', r'"\1":"REDACTED"', text)


def _data(answer: Any) -> Any:
    return answer["ocs"]["data"]


def talk(rec: Recorder) -> None:
    room = _data(
        rec.record("talk_create_group", "POST", ROOM, data={"roomType": 2, "roomName": "Trip planning"})
    )
    real = room["token"]  # sent as it is; written as tok1
    add = f"{ROOM}/{real}/participants"
    rec.record("talk_add_participant", "POST", add, data={"newParticipant": "admin", "source": "users"})
    rec.record(
        "talk_add_participant_unknown", "POST", add, data={"newParticipant": "nobody", "source": "users"}
    )
    asked = _data(rec.record("talk_post", "POST", f"{CHAT}/{real}", data={"message": "Train at 9, @admin?"}))
    reply = _data(
        rec.record(
            "talk_post_reply",
            "POST",
            f"{CHAT}/{real}",
            user="admin",
            data={"message": "Yes, see you there", "replyTo": asked["id"]},
        )
    )
    rec.record("talk_react", "POST", f"{REACTION}/{real}/{reply['id']}", data={"reaction": "👍"})
    rec.record(
        "talk_react_not_an_emoji", "POST", f"{REACTION}/{real}/{reply['id']}", data={"reaction": "yes"}
    )
    rec.record(
        "talk_post_reply_to_missing",
        "POST",
        f"{CHAT}/{real}",
        data={"message": "?", "replyTo": 999999},
    )
    rec.record("talk_conversations", "GET", ROOM, params={"noStatusUpdate": 1, "includeLastMessage": "false"})
    rec.record("talk_conversation", "GET", f"{ROOM}/{real}")
    rec.record("talk_conversation_missing", "GET", f"{ROOM}/zz99zz99")
    rec.record("talk_participants", "GET", add)
    newest = {"lookIntoFuture": 0, "limit": 20, **QUIET}
    rec.record("talk_messages_newest", "GET", f"{CHAT}/{real}", params=newest)
    since = {"lookIntoFuture": 1, "limit": 20, **QUIET, "lastKnownMessageId": asked["id"]}
    rec.record("talk_messages_since", "GET", f"{CHAT}/{real}", params=since)
    page = {"lookIntoFuture": 0, "limit": 2, **QUIET, "lastKnownMessageId": reply["id"]}
    rec.record("talk_messages_before", "GET", f"{CHAT}/{real}", params=page)
    latest = max(m["id"] for m in _data(rec.send("GET", f"{CHAT}/{real}", params=newest).json()))
    nothing = {"lookIntoFuture": 1, "limit": 20, **QUIET, "lastKnownMessageId": latest}
    rec.record("talk_messages_since_nothing_new", "GET", f"{CHAT}/{real}", params=nothing)
    rec.record("talk_mentions", "GET", f"{CHAT}/{real}/mentions", params={"search": "ad", "limit": 10})
    rec.record("talk_open_one_to_one", "POST", ROOM, data={"roomType": 1, "invite": "admin"})
    rec.record("talk_open_one_to_one_again", "POST", ROOM, data={"roomType": 1, "invite": "admin"})
    rec.record("talk_open_one_to_one_unknown", "POST", ROOM, data={"roomType": 1, "invite": "nobody"})


def collectives(rec: Recorder, major: str) -> None:
    if major == "29":  # Collectives 2.18: no OCS API; the client tells "too old" from "missing"
        rec.record("collectives_list_no_api", "GET", COLLECTIVES)
        rec.record("collectives_navigation", "GET", "/ocs/v2.php/core/navigation/apps")
        return
    made = _data(rec.send("POST", COLLECTIVES, data={"name": "Team Wiki"}).json())["collective"]
    at = f"{COLLECTIVES}/{made['id']}"
    rec.record("collectives_list", "GET", COLLECTIVES)
    [landing] = _data(rec.record("collectives_pages_new", "GET", f"{at}/pages"))["pages"]
    parent = _data(
        rec.record(
            "collectives_create_page", "POST", f"{at}/pages/{landing['id']}", data={"title": "Meetings"}
        )
    )
    child = f"{at}/pages/{parent['page']['id']}"
    rec.record("collectives_create_subpage", "POST", child, data={"title": "2026/11 Weekly"})
    rec.record("collectives_create_page_taken", "POST", child, data={"title": "2026-11 Weekly"})
    rec.record("collectives_pages", "GET", f"{at}/pages")
    rec.record("collectives_page", "GET", f"{at}/pages/{parent['page']['id']}")
    rec.record("collectives_page_missing", "GET", f"{at}/pages/999999")
    rec.record("collectives_collective_missing", "GET", f"{COLLECTIVES}/77777/pages")


TABLES = "/index.php/apps/tables/api/1"
LINK = "https://example.org/train"


def tables(rec: Recorder, major: str) -> None:
    """A table "Trip" with a column of each kind, a view "Done" that Nextcloud filters, two rows."""
    table = rec.send("POST", f"{TABLES}/tables", data={"title": "Trip", "emoji": "🧳"}).json()["id"]
    ids = {}
    for spec in COLUMNS:
        column = rec.send("POST", f"{TABLES}/tables/{table}/columns", data={"mandatory": False, **spec})
        ids[spec["title"]] = column.json()["id"]
    view = rec.send("POST", f"{TABLES}/tables/{table}/views", data={"title": "Done"}).json()["id"]
    shown = [ids["Name"], ids["Hours"]]
    rule = [[{"columnId": ids["Status"], "operator": "is-equal", "value": "@selection-id-2"}]]
    if major == "29":  # Tables 0.9 takes JSON text; 2.2 JSON and column settings
        settings: dict[str, Any] = {"columns": json.dumps(shown), "filter": json.dumps(rule)}
    else:
        settings = {
            "columnSettings": [{"columnId": c, "order": n} for n, c in enumerate(shown)],
            "filter": rule,
        }
    rec.send("PUT", f"{TABLES}/views/{view}", data={"data": settings})
    rec.record("tables_list", "GET", f"{TABLES}/tables")
    rec.record("tables_table", "GET", f"{TABLES}/tables/{table}")
    rec.record("tables_views", "GET", f"{TABLES}/tables/{table}/views")
    rec.record("tables_view", "GET", f"{TABLES}/views/{view}")
    rec.record("tables_columns", "GET", f"{TABLES}/tables/{table}/columns")
    rec.record("tables_view_columns", "GET", f"{TABLES}/views/{view}/columns")
    cells = {
        "Name": "Book the train",
        "Status": 2,
        "Tags": [1, 2],
        "Hours": 2.5,
        "Due": "2026-12-01",
        "Booked": "true",
        "Link": json.dumps({"title": LINK, "value": LINK}),
        "Notes": "Seat 42, **window**",
    }
    data = {"data": {str(ids[title]): value for title, value in cells.items()}}
    row = rec.record("tables_create_row", "POST", f"{TABLES}/tables/{table}/rows", data=data)["id"]
    rec.record("tables_row_created", "GET", f"{TABLES}/rows/{row}")
    other = {"data": {str(ids["Name"]): "Hotel", str(ids["Status"]): 1}}
    hotel = rec.send("POST", f"{TABLES}/tables/{table}/rows", data=other).json()["id"]
    page = {"limit": 50, "offset": 0}
    rec.record("tables_rows", "GET", f"{TABLES}/tables/{table}/rows", params=page)
    rec.record("tables_view_rows", "GET", f"{TABLES}/views/{view}/rows", params=page)
    rec.record("tables_update_row", "PUT", f"{TABLES}/rows/{row}", data={"data": {str(ids["Hours"]): 3}})
    rec.record("tables_row_updated", "GET", f"{TABLES}/rows/{row}")
    rec.record(
        "tables_create_row_without_mandatory",
        "POST",
        f"{TABLES}/tables/{table}/rows",
        data={"data": {str(ids["Notes"]): "no name"}},
    )
    rec.record("tables_delete_row", "DELETE", f"{TABLES}/rows/{hotel}")
    rec.record("tables_table_missing", "GET", f"{TABLES}/tables/99999")
    rec.record("tables_row_missing", "GET", f"{TABLES}/rows/99999")
    rec.record(
        "tables_update_row_missing", "PUT", f"{TABLES}/rows/99999", data={"data": {str(ids["Hours"]): 1}}
    )
    rec.record("tables_capabilities", "GET", "/ocs/v2.php/cloud/capabilities")


SEQUENCES: dict[str, Callable[[Recorder, str], None]] = {
    "talk": lambda rec, _major: talk(rec),
    "collectives": collectives,
    "tables": tables,
}
# Recorded by scripts of their own into tests/fixtures/nextcloud{,34}/, each from a reset instance.
# Not Deck's (tests/toolsets/deck/record_deck.py): on 34 it asks right after `occ app:disable
# deck`, which Nextcloud 34's few seconds of enabled-apps cache still answers with the boards; run
# it on its own.
OTHERS: dict[str, Callable[[Path], None]] = {"file apps": record_file_apps.main}


def main(argv: list[str]) -> int:
    kit = Kit.locate()
    for major in argv or ["29", "34"]:
        instance = kit.start(major, apps=True)
        for name, sequence in SEQUENCES.items():
            instance.reset()  # each app's sequence starts from the seed state
            print(f"Nextcloud {instance.version}: {name}")
            sequence(Recorder(instance, major), major)
        for name, record in OTHERS.items():
            instance.reset()
            print(f"Nextcloud {instance.version}: {name}")
            record(instance.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
