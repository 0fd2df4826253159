"""Record Deck exchanges with the real Nextcloud of the kit (`--apps all`) into
tests/fixtures/nextcloud/ (29, Deck 1.13.10) or tests/fixtures/nextcloud34/ (34, Deck 1.18.3), in
the format of their README. Run by hand, never by the suite, on an instance just reset:

    $NEXTCLOUD_KIT reset DIR && .venv/bin/python -m tests.toolsets.deck.record_deck DIR

Recorded as `admin`; secrets and cookies become REDACTED, the host 127.0.0.1:8080. Read by
tests/toolsets/deck/test_deck_recordings.py."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.record_more import JSON, OCS, Recorder
from tests.recordings import FIXTURES, FIXTURES_34

API = "/index.php/apps/deck/api/v1.0"
DECK_OCS = "/ocs/v2.php/apps/deck/api/v1.0"


def record(instance: Path) -> None:
    rec = Recorder(instance)
    major = rec.config["version"].split(".")[0]
    rec.out = FIXTURES_34 if major == "34" else FIXTURES

    def call(name: str, method: str, path: str, **kwargs: object) -> tuple[int, dict[str, str], str]:
        return rec.call(name, method, path, **kwargs)  # type: ignore[arg-type]

    call("deck_boards_list", "GET", f"{API}/boards", headers=OCS)
    _, _, text = call(
        "deck_board_create", "POST", f"{API}/boards", headers=JSON, body='{"title":"Launch","color":"0082c9"}'
    )
    board = json.loads(text)["id"]
    _, _, text = call(
        "deck_stack_create",
        "POST",
        f"{API}/boards/{board}/stacks",
        headers=JSON,
        body='{"title":"To do","order":0}',
    )
    stack = json.loads(text)["id"]
    card_body = '{"title":"Press release","type":"plain","order":999,"duedate":"2026-12-01T16:00:00+00:00"}'
    _, _, text = call(
        "deck_card_create", "POST", f"{API}/boards/{board}/stacks/{stack}/cards", headers=JSON, body=card_body
    )
    card = json.loads(text)["id"]
    path = f"{API}/boards/{board}/stacks/{stack}/cards/{card}"
    call("deck_card_get", "GET", path, headers=OCS)
    call("deck_card_missing_403", "GET", f"{API}/boards/{board}/stacks/{stack}/cards/999999", headers=OCS)
    update = (
        '{"title":"Press release","type":"plain","owner":"admin","description":"","order":0,"duedate":null}'
    )
    call("deck_card_update", "PUT", path, headers=JSON, body=update)
    call("deck_card_reorder", "PUT", f"{path}/reorder", headers=JSON, body=f'{{"stackId":{stack},"order":0}}')
    since = {**OCS, "If-Modified-Since": "Mon, 02 Nov 2026 09:00:00 GMT"}
    call("deck_boards_if_modified_since", "GET", f"{API}/boards", headers=since)
    comment = '{"message":"Draft is in Files","parentId":0}'
    call(
        "deck_comment_create",
        "POST",
        f"{DECK_OCS}/cards/{card}/comments?format=json",
        headers=JSON,
        body=comment,
    )
    call("deck_comments_list", "GET", f"{DECK_OCS}/cards/{card}/comments?format=json&limit=10", headers=OCS)
    call("deck_upcoming", "GET", f"{DECK_OCS}/overview/upcoming?format=json", headers=OCS)
    rec.occ("app:disable", "deck")
    try:
        # Nextcloud 34 keeps the enabled apps cached for a few seconds: ask (with a deadline)
        # until Deck is gone, so the recording is of the disabled app, not of the cache.
        deadline = time.monotonic() + 30
        while call("deck_app_disabled_404", "GET", f"{API}/boards", headers=OCS)[0] != 404:
            if time.monotonic() > deadline:
                raise SystemExit("Deck still answered 30 s after occ app:disable deck")
    finally:
        rec.occ("app:enable", "deck")


if __name__ == "__main__":
    record(Path(sys.argv[1]))
