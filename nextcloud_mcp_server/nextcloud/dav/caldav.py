"""CalDAV (RFC 4791) on the user's calendars.

Discovery follows the protocol instead of guessing URLs: `current-user-principal` at the DAV root,
then the principal's `calendar-home-set` (a real Nextcloud answers the home only on the principal,
see `caldav_principal.txt`, and the DAV user id need not be the login name). In the home, only
collections whose resourcetype has `cal:calendar` are calendars; Nextcloud keeps deleted calendars
listed with `nc:deleted-calendar` until they are purged, and those are hidden.

The events of a range (`events_between`, ADR 0050) are read with two REPORTs that Nextcloud answers
from its index: the range itself, and the events whose last occurrence Nextcloud stores as its
MAX_DATE (rules without an end), because Nextcloud 29 fails a ranged REPORT with HTTP 500 and 34
silently leaves an event out when a rule repeats more than 3500 times before the range. What a
listing read is kept with the calendar's ctag (`kept.py`) and served again while the ctag, asked
again by the caller in the same call, is unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, unquote, urlsplit

from nextcloud_mcp_server.nextcloud import etags
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.dav.home import WRITE_PRIVILEGES, DavHomeClient
from nextcloud_mcp_server.nextcloud.dav.ical_screen import starts_after
from nextcloud_mcp_server.nextcloud.dav.xml import (
    APPLE,
    CALDAV,
    CS,
    DAV,
    NC_COM,
    xml_escape,
)
from nextcloud_mcp_server.nextcloud.discovery import Discovered
from nextcloud_mcp_server.nextcloud.errors import NextcloudError, NotFound, PreconditionFailed, ServerError
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from nextcloud_mcp_server.nextcloud.models import Calendar, CalendarObject

__all__ = ["ENDLESS_FROM", "CalDAVClient", "CalendarNotFound"]

# Nextcloud stores 2038-01-01 (CalDavBackend::MAX_DATE, 29 and 34) as the last occurrence of a rule
# without an end; a REPORT with only a start is answered from that column alone, never expanded.
ENDLESS_FROM = datetime(2037, 12, 31, tzinfo=UTC)
# Nextcloud compares floating times and all-day dates as if they were UTC; the caller's range, in
# any time zone, is widened by the largest UTC offset so that none is missed (filtered here after).
FLOATING_SLACK = timedelta(hours=14)

_DEFAULT_CALENDAR = (
    f'<?xml version="1.0"?><d:propfind xmlns:d="{DAV}" xmlns:c="{CALDAV}">'
    "<d:prop><c:schedule-default-calendar-URL/></d:prop></d:propfind>"
)
_CALENDARS = (
    f'<?xml version="1.0"?><d:propfind xmlns:d="{DAV}" xmlns:c="{CALDAV}" xmlns:cs="{CS}" xmlns:x1="{APPLE}">'
    "<d:prop><d:resourcetype/><d:displayname/><cs:getctag/><c:supported-calendar-component-set/>"
    "<x1:calendar-color/><d:current-user-privilege-set/></d:prop></d:propfind>"
)


class CalendarNotFound(NotFound):
    """No calendar with that id; the message lists the ones there are."""


def _directly_inside(collection: str, href: str) -> bool:
    """Whether `href` names a member of `collection` itself (one segment deeper, not '.' or '..',
    no encoded separator): every CalDAV target is checked with this before a request is sent."""
    parent, child = unquote(collection).rstrip("/") + "/", unquote(href)
    if not child.startswith(parent):
        return False
    name = child[len(parent) :].rstrip("/")
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..")


def _plain_uid(uid: str) -> bool:
    """A uid that can be a file name `<uid>.ics` in a calendar (others are found by a UID query)."""
    return (
        0 < len(uid) <= 255
        and uid not in (".", "..")
        and not any(c in uid for c in "/\\?#%")
        and not any(ord(c) < 32 or ord(c) == 127 for c in uid)
    )


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


class CalDAVClient(DavHomeClient):
    """The calendars of one user. `home_cache` remembers discovery per user for the process."""

    HOME_SET = f"{{{CALDAV}}}calendar-home-set"
    MULTIGET = (CALDAV, "calendar-multiget")
    HOME_PATH = "calendars"
    KIND = "CalDAV"

    def __init__(
        self,
        http: NextcloudHTTP,
        credential: Credential,
        home_cache: Discovered,
        principal_cache: Discovered | None = None,
        *,
        answers: KeptAnswers | None = None,
        dav_user: Callable[[], Awaitable[str]] | None = None,
    ) -> None:
        super().__init__(http, credential, home_cache, principal_cache, dav_user=dav_user)
        self._answers = answers

    async def calendars(self, *, find_default: bool = True) -> list[Calendar]:
        """The user's calendars: the default first, then the writable ones, then those only read
        (Nextcloud 34 lists a read-only "Contact birthdays" calendar before "Personal").
        `find_default=False` does not ask which is the default (one request less, and on Nextcloud 34
        the dearest of a listing: about 0.15 s of its CPU): for reading, where it does not matter."""
        home = await self.home()
        if not find_default:
            found = await self._calendars(home)
            return sorted(found, key=lambda c: (not c.writable, c.display_name.casefold(), c.id))
        found, default = await asyncio.gather(self._calendars(home), self.default_calendar_href())
        if default is not None and all(c.href != default for c in found):
            # Nextcloud 34 makes the default calendar of an account that has none (one that never
            # logged in on the web) when it is asked where that calendar is: list once more.
            found = await self._calendars(home)
        found = [c.model_copy(update={"default": True}) if c.href == default else c for c in found]
        return sorted(found, key=lambda c: (not c.default, not c.writable, c.display_name.casefold(), c.id))

    async def default_calendar_href(self) -> str | None:
        """Where the user's default calendar is (RFC 6638 `schedule-default-calendar-URL` on the
        principal), or None when the server does not say."""
        try:
            async for item in self._multistatus("PROPFIND", await self.principal(), "0", _DEFAULT_CALENDAR):
                element = item.props.get(f"{{{CALDAV}}}schedule-default-calendar-URL")
                href = element.findtext(f"{{{DAV}}}href") if element is not None else None
                if href and href.strip():
                    path = urlsplit(href.strip()).path
                    return path if path.endswith("/") else path + "/"
        except NextcloudError:  # listing the calendars says what is wrong, if anything is
            return None
        return None

    async def _calendars(self, home: str) -> list[Calendar]:
        found = []
        async for item in self._multistatus("PROPFIND", home, "1", _CALENDARS):
            kinds = item.children(f"{{{DAV}}}resourcetype")
            if f"{{{CALDAV}}}calendar" not in kinds or f"{{{NC_COM}}}deleted-calendar" in kinds:
                continue
            path = urlsplit(item.href).path
            if not _directly_inside(home, path):
                continue  # not a calendar of this home, whatever the server says
            cal_id = unquote(path.rstrip("/").rpartition("/")[2])
            components_element = item.props.get(f"{{{CALDAV}}}supported-calendar-component-set")
            components = (
                [c.get("name", "") for c in components_element]
                if components_element is not None
                else ["VEVENT", "VTODO"]
            )
            privileges = item.props.get(f"{{{DAV}}}current-user-privilege-set")
            writable = True
            if privileges is not None:
                held = {p.tag for privilege in privileges for p in privilege}
                writable = bool(held & WRITE_PRIVILEGES)
            color = item.text(f"{{{APPLE}}}calendar-color") or None
            found.append(
                Calendar(
                    id=cal_id,
                    href=path if path.endswith("/") else path + "/",
                    display_name=item.text(f"{{{DAV}}}displayname") or cal_id,
                    color=color[:7] if color and len(color) == 9 else color,
                    components=components,
                    writable=writable,
                    ctag=item.text(f"{{{CS}}}getctag") or "",
                )
            )
        return found

    async def calendar(self, cal_id: str, *, find_default: bool = True) -> Calendar:
        calendars = await self.calendars(find_default=find_default)
        for calendar in calendars:
            if calendar.id == cal_id or calendar.display_name == cal_id:
                return calendar
        if not find_default:  # Nextcloud 34 makes the default calendar when asked where it is
            return await self.calendar(cal_id)
        known = ", ".join(f"{c.id} ({c.display_name})" for c in calendars) or "none"
        raise CalendarNotFound(self.host, f"no calendar '{cal_id}'; the calendars are: {known}", status=404)

    async def query(
        self,
        calendar: Calendar,
        component: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        uid: str | None = None,
    ) -> list[CalendarObject]:
        """calendar-query REPORT: objects with a `component` in [start, end) (either may be open),
        or with this UID. Only ETag and data are asked for: both are used."""
        inner = ""
        if start is not None or end is not None:
            attrs = (f' start="{_utc(start)}"' if start else "") + (f' end="{_utc(end)}"' if end else "")
            inner += f"<c:time-range{attrs}/>"
        if uid is not None:
            inner += (
                '<c:prop-filter name="UID"><c:text-match collation="i;octet">'
                f"{xml_escape(uid)}</c:text-match></c:prop-filter>"
            )
        body = (
            f'<?xml version="1.0"?><c:calendar-query xmlns:d="{DAV}" xmlns:c="{CALDAV}">'
            "<d:prop><d:getetag/><c:calendar-data/></d:prop>"
            f'<c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="{component}">{inner}'
            "</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>"
        )
        objects = []
        async for item in self._multistatus("REPORT", calendar.href, "1", body):
            data = item.text(f"{{{CALDAV}}}calendar-data")
            if data and _directly_inside(calendar.href, urlsplit(item.href).path):
                etag = etags.plain(item.text(f"{{{DAV}}}getetag"))
                objects.append(CalendarObject(href=urlsplit(item.href).path, etag=etag, ics=data))
        return objects

    async def events_between(
        self, calendar: Calendar, lower: datetime, upper: datetime
    ) -> list[CalendarObject]:
        """The event objects that may have an occurrence in [lower, upper), to be expanded and
        filtered by the caller: those Nextcloud finds in the range, and every rule without an end.
        `calendar` must come from `calendars()` in the same call: its ctag dates a kept answer."""
        return await self._kept(
            calendar,
            f"events:{_utc(lower)}:{_utc(upper)}",
            lambda: self._events_between(calendar, lower - FLOATING_SLACK, upper + FLOATING_SLACK),
        )

    async def _events_between(
        self, calendar: Calendar, lower: datetime, upper: datetime
    ) -> list[CalendarObject]:
        if lower >= ENDLESS_FROM:
            return await self.query(calendar, "VEVENT", start=lower)
        endless = asyncio.ensure_future(self.query(calendar, "VEVENT", start=ENDLESS_FROM))
        try:
            try:
                dated = await self.query(calendar, "VEVENT", start=lower, end=upper)
            except ServerError:
                # Nextcloud 29 (MaxInstancesExceeded): from the range on, answered without expansion.
                # A rule repeats that often only years after it began: the range is recent. Every
                # later event comes too; those that plainly start after the range are left unread.
                after = (upper + timedelta(days=1)).date()
                dated = [
                    obj
                    for obj in await self.query(calendar, "VEVENT", start=lower)
                    if not starts_after(obj.ics, after)
                ]
            found = {obj.href: obj for obj in await endless}
        finally:
            if not endless.done():
                endless.cancel()
                await asyncio.gather(endless, return_exceptions=True)
        found.update((obj.href, obj) for obj in dated)
        return list(found.values())

    async def todos(self, calendar: Calendar) -> list[CalendarObject]:
        """Every task of `calendar` (Nextcloud answers by component alone, without parsing)."""
        return await self._kept(calendar, "todos", lambda: self.query(calendar, "VTODO"))

    async def _kept(
        self, calendar: Calendar, what: str, read: Callable[[], Awaitable[list[CalendarObject]]]
    ) -> list[CalendarObject]:
        """What `read` answers, or what it answered before while the calendar's ctag is the same."""
        if self._answers is None or not calendar.ctag:
            return await read()
        user, key = self._credential.user_id, f"caldav:{calendar.href}:{what}"
        kept = self._answers.get(user, key)
        if kept is not None and kept.validator == calendar.ctag:
            return list(kept.value)
        answers = self._answers

        async def read_and_keep() -> tuple[CalendarObject, ...]:
            objects = tuple(await read())
            size = sum(len(obj.ics) + len(obj.href) + len(obj.etag) + 64 for obj in objects)
            answers.put(user, key, calendar.ctag, objects, size)
            return objects

        # callers that saw the same ctag share one read (docs/ADR/0069)
        shared: tuple[CalendarObject, ...] = await answers.shared(user, key, calendar.ctag, read_and_keep)
        return list(shared)

    def _forget(self, href: str) -> None:
        """After a change made here: drop what is kept for the calendar holding `href`."""
        if self._answers is not None:
            parent = urlsplit(href).path.rpartition("/")[0] + "/"
            self._answers.forget_user(self._credential.user_id, f"caldav:{parent}:")

    async def get(self, href: str) -> CalendarObject:
        response = await self._http.request("GET", self._path(href), credential=self._credential)
        etag = etags.plain(response.headers.get("etag"))
        return CalendarObject(href=urlsplit(href).path, etag=etag, ics=response.text)

    async def find(self, calendar: Calendar, uid: str, component: str) -> CalendarObject:
        """The object with this UID: tried at `<uid>.ics` first, then by a UID query. The uid is
        one path segment inside the calendar (percent-encoded), never a path: a uid such as
        `../../files/alice/x` cannot name anything outside the calendar."""
        href = f"{calendar.href}{quote(uid, safe='')}.ics"
        if _plain_uid(uid) and _directly_inside(calendar.href, href):
            try:
                found = await self.get(href)
            except NotFound:
                pass
            else:
                if f"UID:{uid}" in found.ics.replace("\r\n ", ""):
                    return found
        matches = await self.query(calendar, component, uid=uid)
        if not matches:
            kind = "task" if component == "VTODO" else "event"
            raise NotFound(self.host, f"no {kind} with uid '{uid}' in calendar '{calendar.id}'", status=404)
        return matches[0]

    async def put(self, href: str, ics: str, *, etag: str | None = None, create: bool = False) -> str | None:
        """Store an object. `create` refuses to replace; `etag` refuses a changed object."""
        headers = {"Content-Type": "text/calendar; charset=utf-8"}
        if create:
            headers["If-None-Match"] = "*"
        elif etag:
            headers["If-Match"] = etags.quoted(etag)
        try:
            response = await self._http.request(
                "PUT", self._path(href), credential=self._credential, headers=headers, content=ics.encode()
            )
        except PreconditionFailed as exc:
            message = (
                "an object with this uid already exists"
                if create
                else "it was changed by someone else since it was read; nothing was overwritten"
            )
            raise PreconditionFailed(self.host, message, status=412, body=exc.body) from None
        finally:
            self._forget(href)
        return etags.plain(response.headers.get("etag")) or None

    async def delete(self, href: str, *, etag: str | None = None) -> None:
        headers = {"If-Match": etags.quoted(etag)} if etag else {}
        try:
            await self._http.request("DELETE", self._path(href), credential=self._credential, headers=headers)
        except PreconditionFailed as exc:
            raise PreconditionFailed(
                self.host, "it was changed since it was read; nothing was deleted", status=412, body=exc.body
            ) from None
        finally:
            self._forget(href)
