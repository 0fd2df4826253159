"""`NextcloudClient`: one user's view of a Nextcloud, built per call from the shared pool.

    client = NextcloudClient(http, BasicCredential("alice", app_password))
    notes = await client.notes.list_notes()

This package knows nothing of MCP; it can be used on its own as an async Nextcloud client.
"""

from __future__ import annotations

from functools import cached_property

from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.notes import NotesClient
from nextcloud_mcp_server.nextcloud.ocs import OCSClient

__all__ = ["NextcloudClient"]


class NextcloudClient:
    """The APIs of one Nextcloud, for the user whose credential it carries."""

    def __init__(self, http: NextcloudHTTP, credential: Credential) -> None:
        self.http = http
        self.credential = credential

    @property
    def user_id(self) -> str:
        return self.credential.user_id

    @cached_property
    def notes(self) -> NotesClient:
        return NotesClient(self.http, self.credential)

    @cached_property
    def ocs(self) -> OCSClient:
        return OCSClient(self.http, self.credential)
