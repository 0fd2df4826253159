"""CardDAV of the double: a second Radicale (3.9 serves CardDAV with `addressbook-query`
text-match), mounted where Nextcloud has address books, with Nextcloud's default book `contacts`.

Radicale's principal is the calendar home in this double, so the principal's
`addressbook-home-set` is answered here (`carddav_principal_home.txt`), and a DELETE answers 204
without a body, as Nextcloud does. An `addressbook-query` that asks for some properties only
(`<card:address-data><card:prop name="EMAIL"/>`) gets cards cut to those plus UID, VERSION and
FN, and Nextcloud's `has-photo` is answered, as Nextcloud 29 and 34 do (Radicale sends whole
cards and knows no `has-photo`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree
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


_D, _CARD, _NC = "{DAV:}", "{urn:ietf:params:xml:ns:carddav}", "{http://nextcloud.com/ns}"


def _cut(card: str, names: set[str]) -> str:
    """The card with only the properties named (and UID, VERSION, FN), as sabre cuts it."""
    lines = re.sub(r"\r?\n[ \t]", "", card).splitlines()
    kept = names | {"UID", "VERSION", "FN", "BEGIN", "END"}
    return "".join(
        line + "\r\n" for line in lines if line and re.split(r"[;:]", line)[0].split(".")[-1].upper() in kept
    )


def _partial(answer: bytes, names: set[str]) -> bytes:
    root = ElementTree.fromstring(answer)
    for response in root.iter(f"{_D}response"):
        for propstat in response.findall(f"{_D}propstat"):
            prop = propstat.find(f"{_D}prop")
            if prop is None:
                continue
            for unknown in prop.findall(f"{_NC}has-photo"):
                prop.remove(unknown)  # Radicale's 404 for it
            data = prop.find(f"{_CARD}address-data")
            if data is not None and data.text:
                photo = re.search(r"^PHOTO[;:]", re.sub(r"\r?\n[ \t]", "", data.text), re.MULTILINE | re.I)
                data.text = _cut(data.text, names)
                ElementTree.SubElement(prop, f"{_NC}has-photo").text = "1" if photo else "0"
    return ElementTree.tostring(root, xml_declaration=True, encoding="utf-8")


async def _report(app: Any, inner: Scope, receive: Receive, send: Send) -> None:
    """A REPORT: Radicale's answer, cut as Nextcloud cuts it when only some properties are asked."""
    chunks, more = [], True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"".join(chunks)

    async def replay() -> Any:
        return {"type": "http.request", "body": body, "more_body": False}

    try:
        names = {
            str(p.get("name", "")).upper()
            for p in ElementTree.fromstring(body).iter(f"{_CARD}prop")
            if p.get("name")
        }
    except ElementTree.ParseError:
        names = set()
    if names:
        await _cut_answer(app, inner, replay, send, names)
    else:
        await app(dict(inner, root_path=ADDRESSBOOKS_PREFIX), replay, send)


async def _cut_answer(app: Any, inner: Scope, receive: Receive, send: Send, names: set[str]) -> None:
    start: dict[str, Any] = {}
    parts: list[bytes] = []

    async def capture(message: Any) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body":
            parts.append(message.get("body", b""))

    # uncompressed, to be cut here (Radicale gzips when the client accepts it)
    headers = [(k, v) for k, v in inner["headers"] if k.lower() != b"accept-encoding"]
    await app(dict(inner, root_path=ADDRESSBOOKS_PREFIX, headers=headers), receive, capture)
    status, answer = int(start.get("status", 500)), b"".join(parts)
    if status == 207:
        answer = _partial(answer, names)
    await Response(answer, status_code=status, media_type="application/xml; charset=utf-8")(
        inner, receive, send
    )
    return True


async def serve(app: Any, inner: Scope, receive: Receive, send: Send) -> None:
    """Radicale's answer, with a DELETE's 200 + body turned into Nextcloud's 204."""
    if inner["method"] == "REPORT":
        await _report(app, inner, receive, send)
        return
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
