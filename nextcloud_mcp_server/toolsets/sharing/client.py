"""The OCS Share API (`/ocs/v2.php/apps/files_sharing/api/v1/shares`) for one user.

What a real Nextcloud 29 answers (see `tests/fixtures/nextcloud/shares_*.txt`): ids are strings;
errors mirror the HTTP status in `ocs.meta` with a readable message (a missing path, an unknown
user and an expiry in the past are all 404); a public link with read permission is stored as
read + share (17); link answers carry the password's hash, which never leaves this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Literal, Self

from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, InvalidResponse, error_for_status
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP, json_body
from nextcloud_mcp_server.nextcloud.ocs import ocs_envelope
from nextcloud_mcp_server.nextcloud.paths import clean
from nextcloud_mcp_server.numbers import ascii_digits, json_whole

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = [
    "KINDS",
    "PERMISSION_NAMES",
    "Share",
    "ShareKind",
    "SharesClient",
    "check_expiry",
    "check_password",
    "rights_of",
    "share_path",
]

ENDPOINT = "/ocs/v2.php/apps/files_sharing/api/v1/shares"
_HEADERS = {"OCS-APIRequest": "true", "Accept": "application/json"}
ShareKind = Literal["user", "group", "link", "email", "federated", "team", "talk", "other"]
KINDS: dict[int, ShareKind] = {
    0: "user",
    1: "group",
    3: "link",
    4: "email",
    6: "federated",
    7: "team",
    10: "talk",
}
_TYPE_OF_KIND = {"user": 0, "group": 1, "link": 3}
PERMISSION_NAMES = {1: "read", 2: "update", 4: "create", 8: "delete", 16: "share"}
MAX_SHARES = 1000
MAX_PASSWORD = 200
_RECIPIENT = re.compile(r"^[^\x00-\x1f/\\]{1,200}$")


@dataclass(frozen=True)
class Share:
    id: str
    kind: ShareKind
    path: str
    item_type: str  # "file" or "folder"
    permissions: int
    share_with: str | None  # user id or group id; None for links
    share_with_name: str | None
    owner: str
    expiration: str | None  # YYYY-MM-DD
    has_password: bool
    url: str | None  # public links only
    note: str

    @property
    def fingerprint(self) -> str:
        """What a person approved: changing any of it makes the approval void."""
        return f"{self.permissions}|{self.expiration}|{self.has_password}|{self.share_with}|{self.path}"


def rights_of(permissions: int) -> list[str]:
    return [name for bit, name in PERMISSION_NAMES.items() if permissions & bit]


def _share(item: Any, host: str) -> Share:
    if not isinstance(item, dict) or "id" not in item:
        raise InvalidResponse(host, "a share in the answer has no id")
    share_type = json_whole(item.get("share_type"))  # 0 is a user share
    kind = KINDS.get(-1 if share_type is None else share_type, "other")
    expiration = item.get("expiration")
    return Share(
        id=str(item["id"]),
        kind=kind,
        path=str(item.get("path") or item.get("file_target") or ""),
        item_type=str(item.get("item_type") or ""),
        permissions=json_whole(item.get("permissions")) or 0,
        share_with=None if kind == "link" else (str(item["share_with"]) if item.get("share_with") else None),
        share_with_name=None if kind == "link" else (str(item.get("share_with_displayname") or "") or None),
        owner=str(item.get("uid_owner") or ""),
        expiration=str(expiration)[:10] if expiration else None,
        has_password=bool(item.get("password")),
        url=str(item["url"]) if kind == "link" and item.get("url") else None,
        note=str(item.get("note") or "")[:1000],
    )


def share_path(path: str) -> str:
    """A path inside the user's files as the Share API wants it ('/Taxes'); never the root."""
    cleaned = clean(path)
    if not cleaned:
        raise InvalidInput("name a file or folder to share, not your whole files root")
    return "/" + cleaned


def check_expiry(value: str, today: date | None = None) -> str:
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise InvalidInput("the expiry must be a date like 2026-12-31") from None
    if day <= (today or date.today()):
        raise InvalidInput("the expiry must be after today")
    return day.isoformat()


def check_password(value: str) -> str:
    if not value or len(value) > MAX_PASSWORD or any(ord(c) < 32 for c in value):
        raise InvalidInput(f"a link password has 1 to {MAX_PASSWORD} printable characters")
    return value


class SharesClient:
    def __init__(self, http: NextcloudHTTP, credential: Credential) -> None:
        self._http = http
        self._credential = credential

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        return cls(nextcloud.http, nextcloud.credential)

    @property
    def host(self) -> str:
        return self._http.host

    async def _call(
        self, method: str, suffix: str = "", *, params: dict[str, Any] | None = None, data: Any = None
    ) -> Any:
        response = await self._http.request(
            method,
            ENDPOINT + suffix,
            credential=self._credential,
            params={"format": "json", **(params or {})},
            headers=_HEADERS,
            json=data,
            accept={400, 403, 404},
        )
        code, message, body = ocs_envelope(json_body(response, self.host), self.host, response.status_code)
        if code not in (100, 200):
            raise error_for_status(self.host, code, "", message.strip()[:300] or None)
        return body

    async def _list(self, params: dict[str, Any]) -> list[Share]:
        data = await self._call("GET", params=params)
        if not isinstance(data, list):
            raise InvalidResponse(self.host, "the shares are not a list")
        return [_share(item, self.host) for item in data[:MAX_SHARES]]

    async def of_path(self, path: str, *, subfiles: bool = False) -> list[Share]:
        """The shares the user made of `path` (or of the items in a folder with `subfiles`)."""
        params: dict[str, Any] = {"path": share_path(path), "reshares": "true"}
        if subfiles:
            params["subfiles"] = "true"
        return await self._list(params)

    async def mine(self) -> list[Share]:
        return await self._list({})

    async def shared_with_me(self) -> list[Share]:
        return await self._list({"shared_with_me": "true"})

    async def get(self, share_id: str) -> Share:
        data = await self._call("GET", f"/{_id(share_id)}")
        item = data[0] if isinstance(data, list) and data else data
        return _share(item, self.host)

    async def create(
        self,
        path: str,
        kind: Literal["user", "group", "link"],
        *,
        permissions: int,
        share_with: str | None = None,
        password: str | None = None,
        expire_date: str | None = None,
        note: str | None = None,
    ) -> Share:
        body: dict[str, Any] = {"path": share_path(path), "shareType": _TYPE_OF_KIND[kind]}
        body["permissions"] = permissions
        if kind != "link":
            if not share_with or not _RECIPIENT.match(share_with):
                raise InvalidInput("name the user or group to share with")
            body["shareWith"] = share_with
        if password is not None:
            body["password"] = check_password(password)
        if expire_date is not None:
            body["expireDate"] = check_expiry(expire_date)
        if note:
            body["note"] = note[:1000]
        return _share(await self._call("POST", data=body), self.host)

    async def update(
        self,
        share_id: str,
        *,
        permissions: int | None = None,
        password: str | None = None,
        expire_date: str | None = None,
        note: str | None = None,
    ) -> Share:
        """Change a share; `password=""` removes the password, `expire_date=""` the expiry."""
        body: dict[str, Any] = {}
        if permissions is not None:
            body["permissions"] = permissions
        if password is not None:
            body["password"] = check_password(password) if password else ""
        if expire_date is not None:
            body["expireDate"] = check_expiry(expire_date) if expire_date else ""
        if note is not None:
            body["note"] = note[:1000]
        if not body:
            raise InvalidInput("say what to change: permissions, password, expiry or note")
        return _share(await self._call("PUT", f"/{_id(share_id)}", data=body), self.host)

    async def delete(self, share_id: str) -> None:
        await self._call("DELETE", f"/{_id(share_id)}")


def _id(share_id: str) -> str:
    if not ascii_digits(share_id):
        raise InvalidInput(f"'{share_id[:40]}' is not a share id")
    return share_id
