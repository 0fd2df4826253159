"""CardDAV of the double: a second Radicale (3.9 serves CardDAV with `addressbook-query`
text-match), mounted where Nextcloud has address books, with Nextcloud's default book `contacts`.

Radicale's principal is the calendar home in this double, so the principal's
`addressbook-home-set` is answered here (`carddav_principal_home.txt`), and a DELETE answers 204
without a body, as Nextcloud does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from tests.nextcloud_double.dav import make_radicale
from tests.nextcloud_double.dav_extras import wsgi_call
from tests.nextcloud_double.users import Accounts

__all__ = ["ADDRESSBOOKS_PREFIX", "address_book_home", "create_address_book", "make_contacts_radicale"]

ADDRESSBOOKS_PREFIX = "/remote.php/dav/addressbooks/users"


def create_address_book(radicale: Callable[..., Any], user: str, auth: str, book_id: str, name: str) -> int:
    body = (
        '<?xml version="1.0"?><d:mkcol xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">'
        "<d:set><d:prop><d:resourcetype><d:collection/><card:addressbook/></d:resourcetype>"
        f"<d:displayname>{escape(name)}</d:displayname></d:prop></d:set></d:mkcol>"
    )
    return wsgi_call(radicale, "MKCOL", ADDRESSBOOKS_PREFIX, f"/{user}/{book_id}/", body.encode(), auth)


def make_contacts_radicale(root: Path, accounts: Accounts) -> Any:
    radicale = make_radicale(root, accounts)
    for account in accounts:
        create_address_book(
            radicale, account.id, accounts.inner_authorization(account.id), "contacts", "Contacts"
        )
    return radicale


def address_book_home(path: str, user: str) -> Response:
    """The principal's addressbook-home-set, as the real server answers it."""
    body = (
        '<?xml version="1.0"?>\n<d:multistatus xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">'
        f"<d:response><d:href>{escape(path)}</d:href><d:propstat><d:prop><card:addressbook-home-set>"
        f"<d:href>{ADDRESSBOOKS_PREFIX}/{escape(user)}/</d:href></card:addressbook-home-set></d:prop>"
        "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
    )
    return Response(body, status_code=207, media_type="application/xml; charset=utf-8")


async def serve(app: Any, inner: Scope, receive: Receive, send: Send) -> None:
    """Radicale's answer, with a DELETE's 200 + body turned into Nextcloud's 204."""
    if inner["method"] != "DELETE":
        await app(dict(inner, root_path=ADDRESSBOOKS_PREFIX), receive, send)
        return
    start: dict[str, Any] = {}

    async def capture(message: Any) -> None:
        if message["type"] == "http.response.start":
            start.update(message)

    await app(dict(inner, root_path=ADDRESSBOOKS_PREFIX), receive, capture)
    status = int(start.get("status", 500))
    keep = [
        (k, v) for k, v in start.get("headers", []) if k.lower() not in (b"content-length", b"content-type")
    ]
    if status == 200:
        await send({"type": "http.response.start", "status": 204, "headers": keep})
        await send({"type": "http.response.body", "body": b""})
    else:
        await Response(status_code=status)(inner, receive, send)
