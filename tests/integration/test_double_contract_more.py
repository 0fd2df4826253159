"""The double agrees with the real Nextcloud on the OCS Share API, unified search and CardDAV:
the recorded requests (tests/record_more.py) are replayed in order against the double and the
answers compared on what clients rely on (status, OCS meta, JSON field names, DAV hrefs)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from tests.conftest import ADMIN_APP_PASSWORD, ALICE_APP_PASSWORD
from tests.nextcloud_double import NextcloudDouble
from tests.recordings import Recording, load

pytestmark = pytest.mark.integration

SHARES_SEQUENCE = [
    "shares_create_link",
    "shares_create_user",
    "shares_create_group",
    "shares_create_missing_path_404",
    "shares_create_unknown_user",
    "shares_create_link_past_expiry",
    "shares_of_path",
    "shares_all_mine",
    "shares_shared_with_me",
    "shares_get_one",
    "shares_update_permissions",
    "shares_update_expiry",
    "shares_update_password",
    "shares_delete",
    "shares_delete_again_404",
    "shares_get_404",
]
# Recorded expiry dates, moved to dates that stay in the future whenever the test runs.
FUTURE = {"2026-12-31": 30, "2027-01-15": 60}


def _shape(value: Any) -> Any:
    """Field names (recursively for objects, of the first element for lists), not values."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return "value"


class Replayer:
    def __init__(self, base_url: str) -> None:
        self.client = httpx.Client(base_url=base_url, timeout=10)
        self.base_url = base_url

    def replay(self, recording: Recording) -> httpx.Response:
        assert recording.method
        assert recording.path
        body = recording.request_body
        for recorded, days in FUTURE.items():
            body = body.replace(recorded, (date.today() + timedelta(days=days)).isoformat()) if body else body
        # Only the recordings made as alice name a login (`-u alice:REDACTED`); the rest are admin's.
        auth = ("alice", ALICE_APP_PASSWORD) if recording.basic_auth else ("admin", ADMIN_APP_PASSWORD)
        return self.client.request(
            recording.method, recording.path, headers=recording.request_headers, content=body, auth=auth
        )


@pytest.fixture
def replayer(double_url: str) -> Iterator[Replayer]:
    replayer = Replayer(double_url)
    yield replayer
    replayer.client.close()


@pytest.fixture(params=["29", "34"])
def recorded_on(request: pytest.FixtureRequest, double: NextcloudDouble) -> str:
    """Which Nextcloud's recordings to replay; the double answers as that release does."""
    double.version = "34.0.1" if request.param == "34" else "29.0.6"
    return str(request.param)


def test_the_share_api_answers_like_the_recorded_nextcloud(
    replayer: Replayer, double: NextcloudDouble, recorded_on: str
) -> None:
    """Statuses, OCS messages of failures and the field names of every share record match."""
    replayer.client.request("MKCOL", "/remote.php/dav/files/admin/Taxes", auth=("admin", ADMIN_APP_PASSWORD))
    replayer.client.put(
        "/remote.php/dav/files/admin/welcome.txt", content=b"hi", auth=("admin", ADMIN_APP_PASSWORD)
    )
    double.shares.groups["family"] = {"alice"}  # the recording ran after `occ group:add family`
    for name in SHARES_SEQUENCE:
        recording = load(name, recorded_on)
        response = replayer.replay(recording)
        assert response.status_code == recording.status, name
        recorded, actual = recording.json()["ocs"], response.json()["ocs"]
        assert actual["meta"] == recorded["meta"], name
        assert _shape(actual["data"]) == _shape(recorded["data"]), name


def test_unified_search_answers_like_the_recorded_nextcloud(replayer: Replayer, recorded_on: str) -> None:
    """The same providers; the files provider finds the same names on the same pages with the
    same cursors; the notes provider finds nothing on 29 (Notes 4.13.1) and the note on 34 (Notes
    6.0.2); an unknown provider is a 500."""
    auth = ("admin", ADMIN_APP_PASSWORD)
    replayer.client.post(
        "/index.php/apps/notes/api/v1/notes",
        json={"title": "Boiler service", "content": "Call the plumber about the radiator pressure"},
        auth=auth,
    )
    replayer.client.request("MKCOL", "/remote.php/dav/files/admin/house", auth=auth)
    replayer.client.put("/remote.php/dav/files/admin/boiler-manual.txt", content=b"bleed", auth=auth)
    replayer.client.put("/remote.php/dav/files/admin/house/boiler-invoice.txt", content=b"paid", auth=auth)
    found: dict[str, set[str]] = {}
    for name in (
        "search_providers",
        "search_files",
        "search_files_page",
        "search_files_content_word",
        "search_notes",
        "search_unknown_provider",
        "search_settings",
    ):
        recording = load(name, recorded_on)
        response = replayer.replay(recording)
        assert response.status_code == recording.status, name
        recorded, actual = recording.json()["ocs"], response.json()["ocs"]
        assert actual["meta"] == recorded["meta"], name
        if name == "search_providers":
            assert [p["id"] for p in actual["data"]] == [p["id"] for p in recorded["data"]]
            assert _shape(actual["data"]) == _shape(recorded["data"])
        elif isinstance(recorded["data"], dict):
            assert _shape(actual["data"]) == _shape(recorded["data"]), name
            assert actual["data"]["cursor"] == recorded["data"]["cursor"], name
            found[name] = {e["title"] for e in actual["data"]["entries"]}
            assert found[name] == {e["title"] for e in recorded["data"]["entries"]}, name
            if name.startswith("search_files"):  # the files provider also names each path
                paths = {e["attributes"]["path"] for e in actual["data"]["entries"]}
                assert paths == {e["attributes"]["path"] for e in recorded["data"]["entries"]}, name


CARDDAV_SEQUENCE = [
    "carddav_principal_home",
    "carddav_propfind_books",
    "carddav_put_card",
    "carddav_put_card_again_412",
    "carddav_get_card",
    "carddav_report_query_tel",
    "carddav_report_query_email",
    "carddav_report_query_fn",
    "carddav_report_query_org",
    "carddav_report_query_categories",
    "carddav_report_query_none",
    "carddav_update_card_ifmatch",
    "carddav_update_card_stale_412",
    "carddav_delete_card_stale_412",
    "carddav_delete_card",
    "carddav_get_card_404",
]


def _hrefs(body: str) -> set[str]:
    from xml.etree import ElementTree

    return {
        (r.findtext("{DAV:}href") or "").rstrip("/")
        for r in ElementTree.fromstring(body).iter("{DAV:}response")
    }


def test_carddav_answers_like_the_recorded_nextcloud(replayer: Replayer, recorded_on: str) -> None:
    """Statuses and ETags of the recorded CardDAV session match on the double's Radicale; the
    queries by phone, email, name (case-insensitive beyond ASCII), organisation and group find the
    same cards; the principal names the same address-book home; the default book is there."""
    etags: dict[str, str] = {}
    for name in CARDDAV_SEQUENCE:
        recording = load(name, recorded_on)
        headers = dict(recording.request_headers)
        if "If-Match" in headers:  # a recorded ETag stands for the double's; the 412s send a stale one
            recorded_etag = headers["If-Match"].strip('"')
            fresh = not name.endswith("_412")
            headers["If-Match"] = f'"{etags[recorded_etag]}"' if fresh else '"stale"'
        assert recording.method
        assert recording.path
        response = replayer.client.request(
            recording.method,
            recording.path,
            headers=headers,
            content=recording.request_body,
            auth=("admin", ADMIN_APP_PASSWORD),
        )
        assert response.status_code == recording.status, name
        if recording.status < 300:  # (the real 412 also names the current ETag; clients ignore it)
            assert ("etag" in recording.headers) <= ("etag" in response.headers), name
        if "etag" in recording.headers and "etag" in response.headers:
            etags[recording.headers["etag"].strip('"')] = response.headers["etag"].strip('"')
        if recording.status == 207:
            actual = _hrefs(response.text)
            if name == "carddav_propfind_books":
                assert "/remote.php/dav/addressbooks/users/admin/contacts" in actual
            else:
                assert actual == _hrefs(recording.body), name
