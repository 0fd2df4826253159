"""OCS endpoints and `/status.php` of the double, shaped like the recorded Nextcloud 29 answers."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tests.nextcloud_double.users import Account

__all__ = ["VERSION", "capabilities", "ocs_response", "status"]

VERSION = {"major": 29, "minor": 0, "micro": 6, "string": "29.0.6", "edition": "", "extendedSupport": False}


def status(version: str = "29.0.6") -> Response:
    return JSONResponse(
        {
            "installed": True,
            "maintenance": False,
            "needsDbUpgrade": False,
            "version": f"{version}.1",
            "versionstring": version,
            "edition": "",
            "productname": "Nextcloud",
            "extendedSupport": False,
        },
        headers={"Access-Control-Allow-Origin": "*"},
    )


def ocs_response(request: Request, data: Any, status_code: int = 200, message: str = "OK") -> Response:
    ok = 200 <= status_code < 300
    meta = {"status": "ok" if ok else "failure", "statuscode": status_code, "message": message}
    wants_json = request.query_params.get("format") == "json" or "json" in request.headers.get("accept", "")
    if wants_json:
        return JSONResponse({"ocs": {"meta": meta, "data": data}}, status_code=status_code)
    body = (
        '<?xml version="1.0"?>\n<ocs><meta><status>{status}</status><statuscode>{statuscode}</statuscode>'
        "<message>{message}</message></meta><data/></ocs>"
    ).format(**meta)
    return Response(body, status_code=status_code, media_type="application/xml")


def capabilities(notes_enabled: bool = True) -> dict[str, Any]:
    caps: dict[str, Any] = {
        "core": {"pollinterval": 60, "webdav-root": "remote.php/webdav", "mod-rewrite-working": True},
        "files": {"bigfilechunking": True, "blacklisted_files": [".htaccess"], "undelete": True},
        "dav": {"chunking": "1.0", "bulkupload": "1.0"},
    }
    if notes_enabled:
        caps["notes"] = {"api_version": ["0.2", "1.3", "1.4"], "version": "4.13.1", "notes_path": "Notes"}
    return {"version": VERSION, "capabilities": caps}


def cloud_user(account: Account) -> dict[str, Any]:
    return {
        "enabled": True,
        "id": account.id,
        "backend": "Database",
        "displayname": account.display_name or account.id,
        "display-name": account.display_name or account.id,
        "email": account.email,
        "groups": [],
        "language": "en",
        "quota": {"free": 10**10, "used": 0, "total": 10**10, "relative": 0, "quota": -3},
    }
