"""Replaying the recorded app answers (tests/fixtures/apps/, `tests.record_apps`) to our clients
through `http_mock`: a route per recorded request, which also checks what our client sent."""

from __future__ import annotations

import json

from tests import http_mock
from tests.recordings import Recording, load_app

__all__ = ["BASE", "replay"]

BASE = "https://cloud.example.com"
_KEPT_HEADERS = ("content-type", "x-chat-last-given", "x-chat-last-common-read")


def _json(text: str | bytes | None) -> object:
    return json.loads(text) if text else None


def replay(version: str, *names: str) -> http_mock.Route:
    """One route for the recorded exchanges `names` (same method and URL, query included), answered
    in turn; each request our client sends must carry the recorded JSON body."""
    recordings = [load_app(name, version) for name in names]
    first = recordings[0]
    assert first.method
    assert first.path
    assert all((r.method, r.path) == (first.method, first.path) for r in recordings), names
    queue = list(recordings)

    def answer(request: http_mock.Request) -> http_mock.Response:
        assert queue, f"more requests than recorded answers for {names}"
        recording = queue.pop(0)
        assert _json(request.content) == _json(recording.request_body), recording.name
        return _response(recording)

    return http_mock.request(first.method, BASE + first.path).mock(side_effect=answer)


def _response(recording: Recording) -> http_mock.Response:
    headers = {k: v for k, v in recording.headers.items() if k in _KEPT_HEADERS}
    return http_mock.Response(recording.status, content=recording.body.encode(), headers=headers)
