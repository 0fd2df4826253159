"""The four kinds of resource: each a URI template, the scope it needs (the one its read tools
declare), its MIME type and its reader."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.uri_template import UriTemplate
from mcp.types import ResourceTemplate

from nextcloud_mcp_server.auth.provisioning import require_provisioning
from nextcloud_mcp_server.auth.scopes import CALENDAR_READ, CONTACTS_READ, FILES_READ, NOTES_READ
from nextcloud_mcp_server.icons import icons_for
from nextcloud_mcp_server.resources._readers import (
    MAX_EVENTS,
    Contents,
    read_calendar,
    read_contact,
    read_file,
    read_note,
)
from nextcloud_mcp_server.resources._uris import (
    CALENDAR_TEMPLATE,
    CONTACT_TEMPLATE,
    FILE_TEMPLATE,
    MAX_URI_CHARS,
    NOTE_TEMPLATE,
    ONE_CALENDAR_TEMPLATE,
)
from nextcloud_mcp_server.tools._registry import SCOPES_META_KEY

__all__ = ["KINDS", "ResourceKind", "match"]

Reader = Callable[[Context[Any, Any], str, dict[str, str | list[str]]], Awaitable[Any]]


# each kind shows the icons of the toolset whose read tools it mirrors
ICONS_OF = {
    "note": "notes",
    "file": "files",
    "calendar": "calendar",
    "one-calendar": "calendar",
    "contact": "contacts",
}


@dataclass(frozen=True)
class ResourceKind:
    name: str
    title: str
    description: str
    uri_template: str
    scope: str
    mime_type: str | None  # None: each resource has its own (files)
    reader: Reader

    @property
    def parsed(self) -> UriTemplate:
        return UriTemplate.parse(self.uri_template)

    @property
    def read(self) -> Callable[..., Awaitable[Contents | Any]]:
        """The reader, run only for a caller who has connected their Nextcloud (offline-access
        mode; elsewhere a no-op): otherwise the same consent answer as a tool's."""
        return require_provisioning(self.reader)

    def template(self) -> ResourceTemplate:
        return ResourceTemplate(
            uri_template=self.uri_template,
            name=self.name,
            title=self.title,
            description=self.description,
            mime_type=self.mime_type,
            icons=list(icons_for(ICONS_OF[self.name])),
            _meta={SCOPES_META_KEY: [self.scope]},
        )


KINDS = (
    ResourceKind(
        name="note",
        title="A note",
        description="One note of the Notes app as Markdown: its title and content. The id is the "
        "one nc_notes_list_notes and nc_notes_search_notes show.",
        uri_template=NOTE_TEMPLATE,
        scope=NOTES_READ,
        mime_type="text/markdown",
        reader=read_note,
    ),
    ResourceKind(
        name="file",
        title="A file",
        description="A file in your Nextcloud by its path (e.g. Documents/report.pdf), with its own "
        "MIME type: text as text, anything else as base64. A file larger than FILES_MAX_READ_BYTES "
        "is described (name, size, type), not sent.",
        uri_template=FILE_TEMPLATE,
        scope=FILES_READ,
        mime_type=None,
        reader=read_file,
    ),
    ResourceKind(
        name="calendar",
        title="A calendar day or week",
        description="The events of a day (2026-11-26) or an ISO week, Monday to Sunday (2026-W48), in "
        "all your calendars, recurring events expanded, as JSON in the default time zone; at most "
        f"{MAX_EVENTS} occurrences.",
        uri_template=CALENDAR_TEMPLATE,
        scope=CALENDAR_READ,
        mime_type="application/json",
        reader=read_calendar,
    ),
    ResourceKind(
        name="one-calendar",
        title="One calendar's day or week",
        description="As nextcloud://calendar/{date}, for one calendar only, by its id (as "
        "nc_calendar_list_calendars shows it, e.g. personal).",
        uri_template=ONE_CALENDAR_TEMPLATE,
        scope=CALENDAR_READ,
        mime_type="application/json",
        reader=read_calendar,
    ),
    ResourceKind(
        name="contact",
        title="A contact",
        description="One contact as its vCard, by address book id (e.g. contacts) and uid, as "
        "nc_contacts_search shows them.",
        uri_template=CONTACT_TEMPLATE,
        scope=CONTACTS_READ,
        mime_type="text/vcard",
        reader=read_contact,
    ),
)


def match(uri: str) -> tuple[ResourceKind, dict[str, str | list[str]]] | None:
    """The kind of resource a URI names and the values of its template's parts."""
    for kind in KINDS:
        values = kind.parsed.match(uri, max_uri_length=MAX_URI_CHARS)
        if values is not None:
            return kind, values
    return None
