"""What the file apps' tests share: a session of the four toolsets for alice, and Nextcloud's own
answers (trash, properties, tags, favorites, comments) read with plain httpx, never through this
server's client."""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import ClientSession

from tests.backends import Login, Nextcloud
from tests.mcp_clients import Human, app_session

__all__ = [
    "TOOLSETS",
    "alice_session",
    "comments_on",
    "delete_file",
    "file_id_of",
    "is_favorite",
    "prop_of",
    "put_in_a_later_second",
    "tag_ids_of",
    "text_of",
    "trash_names",
]

TOOLSETS = "trash,versions,tags,comments"


@asynccontextmanager
async def alice_session(
    nextcloud: Nextcloud, human: Human | None = None, **overrides: Any
) -> AsyncIterator[ClientSession]:
    settings = nextcloud.settings(nextcloud.alice, nextcloud_mcp_toolsets=TOOLSETS, **overrides)
    async with app_session(settings, human) as session:
        yield session


def text_of(result: Any) -> str:
    return str(result.content[0].text)


# --- Nextcloud's own answers, read with plain httpx


def trash_names(nextcloud: Nextcloud, login: Login) -> list[str]:
    with nextcloud.http(login) as http:
        answer = http.request(
            "PROPFIND", f"/remote.php/dav/trashbin/{login.user}/trash", headers={"Depth": "1"}
        )
    assert answer.status_code == 207, answer.text[:300]
    return re.findall(r"/trash/([^<]+)</d:href>", answer.text)


def delete_file(nextcloud: Nextcloud, login: Login, path: str) -> None:
    with nextcloud.http(login) as http:
        assert http.delete(nextcloud.dav_path(login, path)).status_code == 204


def prop_of(nextcloud: Nextcloud, login: Login, path: str, prop: str) -> str:
    body = f'<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><{prop}/></d:prop></d:propfind>'
    with nextcloud.http(login) as http:
        answer = http.request(
            "PROPFIND", nextcloud.dav_path(login, path), headers={"Depth": "0"}, content=body
        )
    found = re.search(rf"<{prop}>([^<]*)<", answer.text)
    assert found, answer.text[:300]
    return found.group(1)


def file_id_of(nextcloud: Nextcloud, login: Login, path: str) -> str:
    return prop_of(nextcloud, login, path, "oc:fileid")


def tag_ids_of(nextcloud: Nextcloud, login: Login, path: str) -> set[str]:
    file_id = file_id_of(nextcloud, login, path)
    with nextcloud.http(login) as http:
        answer = http.request(
            "PROPFIND", f"/remote.php/dav/systemtags-relations/files/{file_id}", headers={"Depth": "1"}
        )
    return set(re.findall(rf"/files/{file_id}/(\d+)</d:href>", answer.text))


def is_favorite(nextcloud: Nextcloud, login: Login, path: str) -> bool:
    body = '<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:favorite/></d:prop></d:propfind>'
    with nextcloud.http(login) as http:
        answer = http.request(
            "PROPFIND", nextcloud.dav_path(login, path), headers={"Depth": "0"}, content=body
        )
    assert answer.status_code == 207, answer.text[:300]
    return "<oc:favorite>1</oc:favorite>" in answer.text


def comments_on(nextcloud: Nextcloud, login: Login, path: str) -> list[str]:
    file_id = file_id_of(nextcloud, login, path)
    body = (
        '<oc:filter-comments xmlns:oc="http://owncloud.org/ns"><oc:limit>100</oc:limit></oc:filter-comments>'
    )
    with nextcloud.http(login) as http:
        answer = http.request("REPORT", f"/remote.php/dav/comments/files/{file_id}", content=body)
    assert answer.status_code == 207, answer.text[:300]
    return re.findall(r"<oc:message>([^<]*)</oc:message>", answer.text)


def put_in_a_later_second(nextcloud: Nextcloud, login: Login, path: str, data: bytes) -> None:
    """Versions are named by their modification time in seconds: a new version written in the
    second of the last one would take its name, so wait (with a deadline) for the next second."""
    if nextcloud.exists(login, path):
        stamp = prop_of(nextcloud, login, path, "d:getlastmodified")
        last = calendar.timegm(time.strptime(stamp, "%a, %d %b %Y %H:%M:%S GMT"))
        deadline = time.monotonic() + 5
        while time.time() < last + 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    nextcloud.put_file(login, path, data)


# --- tests
