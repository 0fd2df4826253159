"""Contacts toolset (CardDAV): address books, search, and contacts kept intact on update."""

from __future__ import annotations

import asyncio
import re
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from nextcloud_mcp_server.auth.scopes import CONTACTS_READ, CONTACTS_WRITE, require_scopes
from nextcloud_mcp_server.nextcloud.dav import vcard
from nextcloud_mcp_server.nextcloud.dav.carddav import (
    DEFAULT_BOOK,
    MAX_QUERY,
    AddressBook,
    Card,
    CardDAVClient,
)
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, PreconditionFailed
from nextcloud_mcp_server.tools._approval import refuse_changed, require_approval, shrinks
from nextcloud_mcp_server.tools._arguments import StrictArguments
from nextcloud_mcp_server.tools._context import nextcloud_for
from nextcloud_mcp_server.tools._registry import Toolset
from nextcloud_mcp_server.tools._results import answer, stale_version
from nextcloud_mcp_server.tools._versions import approve_update, given_etag, removal_question
from nextcloud_mcp_server.views import APPROVAL

__all__ = ["toolset"]

toolset = Toolset("contacts")

BookId = Annotated[str | None, Field(description="Address book id (default: 'contacts')")]
Uid = Annotated[str, Field(min_length=1, max_length=300, description="The uid from a search")]
Field_ = Literal["any", "name", "email", "phone", "organisation", "group"]
_PROPERTIES: dict[str, list[str]] = {
    "name": ["FN", "N", "NICKNAME"],
    "email": ["EMAIL"],
    "phone": ["TEL"],
    "organisation": ["ORG"],
    "group": ["CATEGORIES"],
}
_PROPERTIES["any"] = [p for props in _PROPERTIES.values() for p in props]
_PHONE_CHARS = re.compile(r"^[0-9+()./\s-]+$")
_SHOWN = vcard.SHOWN_PROPERTIES  # a search fetches these, not photos


class AddressBookInfo(BaseModel):
    id: str
    name: str
    writable: bool


class AddressBookList(BaseModel):
    address_books: list[AddressBookInfo]


class Labeled(BaseModel):
    value: str
    types: list[str] = Field(default_factory=list, description="e.g. ['work'], ['cell'], ['home']")


TypeName = Annotated[str, Field(pattern=vcard.TYPE_PATTERN, description="One word: work, home, cell, ...")]


class LabeledInput(StrictArguments):
    """An email address or phone number to write: one line, and types that are plain words (a
    line break in a type once became a property of its own in the card)."""

    value: str = Field(min_length=1, max_length=vcard.MAX_VALUE)
    types: list[TypeName] = Field(
        default_factory=list, max_length=vcard.MAX_TYPES, description="e.g. ['work'], ['cell'], ['home']"
    )


class ContactInfo(BaseModel):
    uid: str
    address_book: str
    full_name: str
    given_name: str
    family_name: str
    nickname: str
    emails: list[Labeled]
    phones: list[Labeled]
    organisation: str
    title: str
    groups: list[str]
    birthday: str
    note: str
    addresses: list[str]
    urls: list[str]
    has_photo: bool
    problems: list[str] = Field(description="What is odd in the card (duplicates, undecodable values)")
    etag: str = Field(description="Pass to nc_contacts_update_contact")


class ContactList(BaseModel):
    contacts: list[ContactInfo]
    truncated: bool


class DeletedContact(BaseModel):
    uid: str
    full_name: str
    deleted: bool = True


def _info(card: Card, book: AddressBook | str) -> ContactInfo:
    view = vcard.read(card.vcard, fallback_uid=card.name.removesuffix(".vcf"))
    return ContactInfo(
        uid=view.uid,
        address_book=book if isinstance(book, str) else book.id,
        full_name=view.full_name,
        given_name=view.given_name,
        family_name=view.family_name,
        nickname=view.nickname,
        emails=[Labeled(value=e.value, types=e.types) for e in view.emails],
        phones=[Labeled(value=p.value, types=p.types) for p in view.phones],
        organisation=view.organisation,
        title=view.title,
        groups=view.groups,
        birthday=view.birthday,
        note=view.note,
        addresses=view.addresses,
        urls=view.urls,
        has_photo=view.has_photo if card.has_photo is None else card.has_photo,
        problems=view.problems,
        etag=card.etag,
    )


def _digits(text: str) -> str:
    return "".join(c for c in text if "0" <= c <= "9")


async def _book(carddav: CardDAVClient, wanted: str | None, *, write: bool = False) -> AddressBook:
    return await carddav.chosen_book(wanted, write=write)


@toolset.tool(title="List address books", read_only=True)
@require_scopes(CONTACTS_READ)
async def nc_contacts_list_address_books(ctx: Context[Any, Any]) -> AddressBookList:
    """Your address books: id, name, and whether you can change them (the 'Accounts' book of all
    users of the server and 'Recently contacted' are read-only)."""
    books = await (await nextcloud_for(ctx)).carddav.address_books()
    return AddressBookList(
        address_books=[AddressBookInfo(id=b.id, name=b.name, writable=b.writable) for b in books]
    )


@toolset.tool(title="Search contacts", read_only=True)
@require_scopes(CONTACTS_READ)
async def nc_contacts_search(
    query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY, description="Text to look for")],
    ctx: Context[Any, Any],
    field: Annotated[
        Field_, Field(description="Where to look: name, email, phone, organisation, group")
    ] = "any",
    address_book: Annotated[str | None, Field(description="One address book (default: all)")] = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 25,
) -> ContactList:
    """Find contacts whose name, email, phone number, organisation or group (category) contains
    the text, case-insensitively in any script. Phone numbers match whatever their formatting
    ('+49 30 1234567' is found by '030/1234567' or '1234567'). Each contact shows what
    nc_contacts_get_contact shows, except problems with its photo (the photo is not fetched)."""
    carddav = (await nextcloud_for(ctx)).carddav
    books = [await _book(carddav, address_book)] if address_book else await carddav.address_books()
    text = query.strip()
    phone = field == "phone" or (field == "any" and _PHONE_CHARS.match(text) and len(_digits(text)) >= 3)
    if phone and len(_digits(text).lstrip("0")) < 3:
        raise InvalidInput("give at least three digits of the phone number")

    async def in_book(book: AddressBook) -> list[Card]:
        if phone:
            # Numbers are stored formatted ('+49 30 123 45 67'): ask for cards with the last two
            # digits, compare digits only (a national 0-prefix matches the international tail).
            digits = _digits(text).lstrip("0")
            cards = await carddav.query(book, ["TEL"], digits[-2:], limit=200, shown=_SHOWN)
            return [c for c in cards if any(_digits(p.value).endswith(digits) for p in _phones(c))]
        return await carddav.query(book, _PROPERTIES[field], text, limit=limit + 1, shown=_SHOWN)

    # the books are asked at once; the answer lists them in their order, as before
    per_book = await asyncio.gather(*(in_book(book) for book in books))
    found: list[ContactInfo] = []
    truncated = False
    for book, matching in zip(books, per_book, strict=True):
        for card in matching:
            if len(found) >= limit:
                truncated = True
                break
            found.append(_info(card, book))
    return ContactList(contacts=found, truncated=truncated)


def _phones(card: Card) -> list[vcard.LabeledValue]:
    return vcard.read(card.vcard).phones


@toolset.tool(title="Get a contact", read_only=True)
@require_scopes(CONTACTS_READ)
async def nc_contacts_get_contact(
    uid: Uid, ctx: Context[Any, Any], address_book: BookId = None
) -> ContactInfo:
    """One contact with every field and its etag (needed to update it)."""
    carddav = (await nextcloud_for(ctx)).carddav
    if address_book is None:  # the default book first: one GET, no listing of the books
        card = await carddav.default_book_card(uid)
        if card is not None:
            return _info(card, DEFAULT_BOOK)
    book = await _book(carddav, address_book)
    return _info(await carddav.find(book, uid), book)


def _changes(
    full_name: str | None,
    given_name: str | None,
    family_name: str | None,
    emails: list[LabeledInput] | None,
    phones: list[LabeledInput] | None,
    organisation: str | None,
    title: str | None,
    groups: list[str] | None,
    note: str | None,
    birthday: str | None,
) -> vcard.ContactChanges:
    if birthday and not re.match(r"^\d{4}-\d{2}-\d{2}$|^--\d{2}-\d{2}$", birthday):
        raise InvalidInput("birthday must be a date like 1990-04-01 (or --04-01 without a year)")
    return vcard.ContactChanges(
        full_name=full_name,
        given_name=given_name,
        family_name=family_name,
        emails=[vcard.LabeledValue(e.value, e.types) for e in emails] if emails is not None else None,
        phones=[vcard.LabeledValue(p.value, p.types) for p in phones] if phones is not None else None,
        organisation=organisation,
        title=title,
        groups=groups,
        note=note,
        birthday=birthday,
    )


ListOf = Annotated[list[LabeledInput] | None, Field(max_length=vcard.MAX_ITEMS)]
Groups = Annotated[list[str] | None, Field(max_length=vcard.MAX_ITEMS, description="Groups (categories)")]


@toolset.tool(title="Create a contact")
@require_scopes(CONTACTS_WRITE)
async def nc_contacts_create_contact(
    full_name: Annotated[str, Field(min_length=1, max_length=vcard.MAX_VALUE)],
    ctx: Context[Any, Any],
    given_name: str | None = None,
    family_name: str | None = None,
    emails: ListOf = None,
    phones: ListOf = None,
    organisation: str | None = None,
    title: str | None = None,
    groups: Groups = None,
    note: str | None = None,
    birthday: Annotated[str | None, Field(description="YYYY-MM-DD")] = None,
    address_book: BookId = None,
) -> ContactInfo:
    """Create a contact (vCard 3.0) in an address book, 'contacts' by default. Without
    given_name and family_name, the full name is split as address books do: the last word (with
    a particle such as 'van' before it) is the family name, the rest the given name."""
    changes = _changes(
        full_name, given_name, family_name, emails, phones, organisation, title, groups, note, birthday
    )
    carddav = (await nextcloud_for(ctx)).carddav
    book = await _book(carddav, address_book, write=True)
    uid = vcard.new_uid()
    text = vcard.build(uid, changes)
    href = f"{book.href}{uid}.vcf"
    etag = await carddav.put(href, text, create=True)
    return _info(Card(href=href, etag=etag or "", vcard=text), book)


@toolset.tool(title="Update a contact", idempotent=True, view=APPROVAL)
@require_scopes(CONTACTS_WRITE)
async def nc_contacts_update_contact(
    uid: Uid,
    etag: Annotated[str, Field(description="The etag from nc_contacts_get_contact or a search")],
    ctx: Context[Any, Any],
    full_name: str | None = None,
    given_name: str | None = None,
    family_name: str | None = None,
    emails: Annotated[
        list[LabeledInput] | None,
        Field(max_length=vcard.MAX_ITEMS, description="Replaces all emails; [] removes them"),
    ] = None,
    phones: Annotated[
        list[LabeledInput] | None, Field(max_length=vcard.MAX_ITEMS, description="Replaces all phone numbers")
    ] = None,
    organisation: str | None = None,
    title: str | None = None,
    groups: Groups = None,
    note: str | None = None,
    birthday: str | None = None,
    address_book: BookId = None,
) -> Annotated[CallToolResult, ContactInfo]:
    """Change a contact. Only the fields you pass change; everything else in the card - photo,
    addresses, custom fields from other apps - stays exactly as it was. If the contact changed
    since you read its etag, nothing is overwritten and the current contact is returned.
    Removing all its emails, phone numbers or groups, or emptying a field, asks the user first
    (and is refused at permission level write)."""
    etag = given_etag(etag)
    changes = _changes(
        full_name, given_name, family_name, emails, phones, organisation, title, groups, note, birthday
    )
    carddav = (await nextcloud_for(ctx)).carddav
    book = await _book(carddav, address_book, write=True)
    card = await carddav.find(book, uid)
    text = vcard.patch(card.vcard, changes)
    shown = vcard.read(card.vcard)
    target = f'the contact "{shown.full_name}"'
    try:
        version = await approve_update(
            ctx,
            tool="nc_contacts_update_contact",
            target=target,
            host=carddav.host,
            given=etag,
            current=card.etag,
            question=removal_question(target, _removals(shown, changes), f" in address book '{book.name}'"),
        )
        new_etag = await version.write(ctx, lambda if_match: carddav.put(card.href, text, etag=if_match))
    except PreconditionFailed as exc:
        current = _info(await carddav.get(card.href), book)
        return stale_version(exc, "contact", "current_contact", current)
    if not new_etag:
        new_etag = (await carddav.get(card.href)).etag
    info = _info(Card(href=card.href, etag=new_etag, vcard=text), book)
    return answer(info)


_TEXTS = {"organisation": "organisation", "title": "title", "note": "note"}
_NAMES = {"given_name": "given name", "family_name": "family name", "birthday": "birthday"}
_LISTS = {"emails": "email addresses", "phones": "phone numbers", "groups": "groups"}


def _removals(shown: vcard.ContactView, changes: vcard.ContactChanges) -> list[str]:
    """What a change takes from a contact (ADR 0019): a field emptied (or a text cut to less than
    half), or every email address, phone number or group."""
    removed = []
    for name, label in (_TEXTS | _NAMES).items():
        new, old = getattr(changes, name), getattr(shown, name)
        if new is not None and old and not new.strip():
            removed.append(f"remove its {label}")
        elif name in _TEXTS and shrinks(old, new):
            removed.append(f"cut its {label}")
    for name, label in _LISTS.items():
        if getattr(changes, name) == [] and getattr(shown, name):
            removed.append(f"remove its {len(getattr(shown, name))} {label}")
    return removed


@toolset.tool(title="Delete a contact", destructive=True, idempotent=True, view=APPROVAL)
@require_scopes(CONTACTS_WRITE)
async def nc_contacts_delete_contact(
    uid: Uid,
    ctx: Context[Any, Any],
    address_book: BookId = None,
    etag: Annotated[str | None, Field(description="Only delete if it is still this version")] = None,
) -> DeletedContact:
    """Delete a contact. The user is asked to approve first (unless the server is set up not to
    ask). Pass its etag to delete only the version you have seen."""
    etag = given_etag(etag) if etag is not None else None
    carddav = (await nextcloud_for(ctx)).carddav
    book = await _book(carddav, address_book, write=True)
    card = await carddav.find(book, uid)
    if etag is not None and etag != card.etag:
        raise PreconditionFailed(
            carddav.host, "the contact changed since that etag; nothing was deleted", status=412
        )
    view = vcard.read(card.vcard)
    details = ", ".join(x for x in (view.organisation, *(e.value for e in view.emails[:1])) if x)
    target = f'the contact "{view.full_name}"' + (f" ({details})" if details else "")
    question = f"Delete {target} from address book '{book.name}'?"
    asked = await require_approval(
        ctx, tool="nc_contacts_delete_contact", target=target, question=question, version=card.etag
    )
    try:
        await carddav.delete(card.href, etag=card.etag)
    except PreconditionFailed:
        if asked:
            await refuse_changed(ctx, tool="nc_contacts_delete_contact", target=target)
        raise
    return DeletedContact(uid=view.uid or uid, full_name=view.full_name)
