"""The OCS Share API of the double, shaped like the recorded Nextcloud 29 (`shares_*.txt`).

Shares live in memory. Like the real server: ids are strings; a missing path, an unknown
recipient and an expiry in the past are 404 with Nextcloud's messages; public links get the
share bit (read = 17); files lose create/delete; link passwords are kept as a (fake) hash and
answered as such in `password` and `share_with`.
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
import time
from datetime import date
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from tests.nextcloud_double.ocs_api import ocs_response
from tests.nextcloud_double.users import Accounts

__all__ = ["SHARES_ENDPOINT", "SharesAPI"]

SHARES_ENDPOINT = "apps/files_sharing/api/v1/shares"
_WRONG_ID = "Wrong share ID, share does not exist"


class SharesAPI:
    def __init__(self, files_root: Path, accounts: Accounts) -> None:
        self.newer = False  # answer as Nextcloud 34 does (the double's `version`)
        self.files_root = files_root
        self.accounts = accounts
        self.groups: dict[str, set[str]] = {"admin": {"admin"}}  # as in the kit's seed state
        self.shares: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(1)

    async def handle(self, request: Request, user: str, endpoint: str) -> Response:
        share_id = endpoint.removeprefix(SHARES_ENDPOINT).strip("/")
        method = request.method
        if not share_id:
            if method == "GET":
                return self._list(request, user)
            if method == "POST":
                return self._create(request, user, await _body(request))
            return ocs_response(request, [], 405, "")
        share = self.shares.get(share_id)
        visible = share is not None and (share["owner"] == user or self._receives(share, user))
        if share is None or not visible:
            return ocs_response(request, [], 404, _WRONG_ID)
        if method == "GET":
            return ocs_response(request, [self._format(request, share, user)])
        if share["owner"] != user:
            return ocs_response(request, [], 403, "You are not allowed to edit incoming shares")
        if method == "DELETE":
            del self.shares[share_id]
            return ocs_response(request, [])
        if method == "PUT":
            return self._update(request, share, await _body(request))
        return ocs_response(request, [], 405, "")

    def _receives(self, share: dict[str, Any], user: str) -> bool:
        if share["type"] == 0:
            return bool(share["with"] == user)
        return share["type"] == 1 and user in self.groups.get(share["with"], set())

    def _list(self, request: Request, user: str) -> Response:
        params = request.query_params
        if params.get("shared_with_me") == "true":
            found = [s for s in self.shares.values() if self._receives(s, user)]
        else:
            found = [s for s in self.shares.values() if s["owner"] == user]
            if params.get("path"):
                wanted = "/" + params["path"].strip("/")
                if not (self.files_root / user / wanted.lstrip("/")).exists():
                    return ocs_response(request, [], 404, "Wrong path, file/folder does not exist")
                found = [s for s in found if s["path"] == wanted]
        found.sort(key=lambda s: (s["type"], int(s["id"])))  # Nextcloud: user, group, then link shares
        return ocs_response(request, [self._format(request, s, user) for s in found])

    def _create(self, request: Request, user: str, body: dict[str, Any]) -> Response:
        path = "/" + str(body.get("path") or "").strip("/")
        target = self.files_root / user / path.lstrip("/")
        if path == "/" or not target.exists():
            return ocs_response(request, [], 404, "Wrong path, file/folder does not exist")
        kind = int(body.get("shareType", -1))
        permissions = int(body.get("permissions") or 31)
        if target.is_file():
            permissions &= ~(4 | 8)
        share: dict[str, Any] = {"owner": user, "path": path, "type": kind, "with": None, "password": None}
        if kind == 0:
            if body.get("shareWith") not in {a.id for a in self.accounts} or body.get("shareWith") == user:
                return ocs_response(request, [], 404, "Please specify a valid account to share with")
            share["with"] = body["shareWith"]
        elif kind == 1:
            if body.get("shareWith") not in self.groups:
                return ocs_response(request, [], 404, "Please specify a valid group")
            share["with"] = body["shareWith"]
        elif kind == 3:
            permissions |= 16
            share["token"] = secrets.token_urlsafe(12)[:15]
        else:
            return ocs_response(request, [], 400, "Unknown share type")
        error = _apply(share, body)
        if error:
            return ocs_response(request, [], 404, error)
        share.update(id=str(next(self._ids)), permissions=permissions, stime=int(time.time()))
        share.setdefault("expiration", None)
        share.setdefault("note", str(body.get("note") or ""))
        self.shares[share["id"]] = share
        return ocs_response(request, self._format(request, share, user))

    def _update(self, request: Request, share: dict[str, Any], body: dict[str, Any]) -> Response:
        error = _apply(share, body)
        if error:
            return ocs_response(request, [], 400, error)
        if "permissions" in body:
            permissions = int(body["permissions"])
            if (self.files_root / share["owner"] / share["path"].lstrip("/")).is_file():
                permissions &= ~(4 | 8)
            share["permissions"] = permissions | (16 if share["type"] == 3 else 0)
        if "note" in body:
            share["note"] = str(body["note"])
        return ocs_response(request, self._format(request, share, share["owner"]))

    def _format(self, request: Request, share: dict[str, Any], user: str) -> dict[str, Any]:
        target = self.files_root / share["owner"] / share["path"].lstrip("/")
        folder = target.is_dir()
        stat = target.stat() if target.exists() else None
        owner = self.accounts[share["owner"]]
        base = f"{request.url.scheme}://{request.url.netloc}"
        data: dict[str, Any] = {
            "id": share["id"],
            "share_type": share["type"],
            "uid_owner": owner.id,
            "displayname_owner": owner.display_name or owner.id,
            "permissions": share["permissions"],
            "can_edit": share["owner"] == user,
            "can_delete": share["owner"] == user,
            "stime": share["stime"],
            "parent": None,
            # the last day, written as its start (29) or its end (34), as the recordings show
            "expiration": f"{share['expiration']} {'23:59:59' if self.newer else '00:00:00'}"
            if share["expiration"]
            else None,
            "token": share.get("token"),
            "uid_file_owner": owner.id,
            "note": share["note"],
            "label": "",
            "displayname_file_owner": owner.display_name or owner.id,
            "path": share["path"],
            "item_type": "folder" if folder else "file",
            "item_permissions": 31 if folder else 27,
            "mimetype": "httpd/unix-directory" if folder else "text/plain",
            "has_preview": not folder,
            "storage_id": f"home::{owner.id}",
            "storage": 1,
            "item_source": stat.st_ino % 10**9 if stat else 0,
            "file_source": stat.st_ino % 10**9 if stat else 0,
            "file_parent": 2,
            "file_target": share["path"],
            "item_size": stat.st_size if stat and not folder else 0,
            "item_mtime": int(stat.st_mtime) if stat else 0,
        }
        if self.newer:  # fields Nextcloud 34 adds (nextcloud34/shares_*.txt)
            data.update({"is-mount-root": False, "mount-type": ""})
        if share["type"] == 3:
            data.update(
                share_with=share["password"],
                share_with_displayname="(Shared link)",
                password=share["password"],
                send_password_by_talk=False,
                url=f"{base}/s/{share['token']}",
            )
        else:
            recipient = self.accounts[share["with"]] if share["type"] == 0 else None
            data["share_with"] = share["with"]
            data["share_with_displayname"] = (
                (recipient.display_name or recipient.id) if recipient else share["with"]
            )
            if recipient is not None:
                data["share_with_displayname_unique"] = recipient.id
        data.update(mail_send=1, hide_download=0, attributes=None)
        if share["owner"] != user and not self.newer:  # none in a recipient's view on 29
            del data["item_permissions"]  # (shares_shared_with_me.txt)
        return data


def _apply(share: dict[str, Any], body: dict[str, Any]) -> str | None:
    """Password and expiry from a request; an error message when the server would refuse."""
    if "expireDate" in body:
        if not body["expireDate"]:
            share["expiration"] = None
        else:
            try:
                day = date.fromisoformat(str(body["expireDate"])[:10])
            except ValueError:
                return "Invalid date. Format must be YYYY-MM-DD"
            if day <= date.today():
                return "Expiration date is in the past"
            share["expiration"] = day.isoformat()
    if "password" in body and share["type"] == 3:
        password = str(body["password"] or "")
        digest = hashlib.sha256(password.encode()).hexdigest()
        share["password"] = f"3|$argon2id$v=19$double${digest}" if password else None
    return None


async def _body(request: Request) -> dict[str, Any]:
    if "json" in request.headers.get("content-type", ""):
        data = await request.json()
        return data if isinstance(data, dict) else {}
    return dict(await request.form())
