"""The clients this authorization server knows: pre-registered (AUTH_SERVER_CLIENTS), registered
dynamically (RFC 7591; kept sealed in the store, forgotten when unused for
AUTH_SERVER_DCR_UNUSED_DAYS), and client ID metadata documents (a URL as client_id; `cimd.py`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull
from pydantic import AnyUrl

from nextcloud_mcp_server.authz.cimd import CIMDError, MetadataDocuments, is_metadata_url
from nextcloud_mcp_server.authz.client_policy import redirect_uri_problem
from nextcloud_mcp_server.authz.connection import Connection
from nextcloud_mcp_server.storage.crypto import Cipher, DecryptionFailed

__all__ = ["Clients", "PolicedClient"]

logger = logging.getLogger(__name__)

TOUCH_EVERY_SECONDS = 3600.0


class PolicedClient(OAuthClientInformationFull):
    """A client whose redirect URIs the SDK's handlers check against the policy as well
    (`client_policy.py`): a URI stored before the policy existed is refused at /authorize, and
    never used for an error redirect either."""

    @classmethod
    def of(cls, client: OAuthClientInformationFull) -> PolicedClient:
        return cls.model_validate(client.model_dump(exclude_none=True))

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        chosen = super().validate_redirect_uri(redirect_uri)
        problem = redirect_uri_problem(str(chosen))
        if problem is not None:
            raise InvalidRedirectUriError(problem)
        return chosen


class Clients:
    def __init__(
        self,
        db: Connection,
        cipher: Cipher,
        *,
        configured: list[dict[str, object]],
        scopes: list[str],
        documents: MetadataDocuments | None,
        unused_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self._cipher = cipher
        self.scopes = scopes
        self.documents = documents
        self.unused_seconds = unused_seconds
        self._clock = clock
        self._configured = {str(c["client_id"]): self._from_configuration(c) for c in configured}

    def _from_configuration(self, entry: dict[str, object]) -> OAuthClientInformationFull:
        secret = entry.get("client_secret")
        return OAuthClientInformationFull.model_validate(
            {
                "client_id": entry["client_id"],
                "client_name": entry.get("client_name") or entry["client_id"],
                "redirect_uris": entry["redirect_uris"],
                "client_secret": secret,
                "token_endpoint_auth_method": "client_secret_post" if secret else "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "scope": " ".join(self.scopes),
            }
        )

    async def get(self, client_id: str) -> OAuthClientInformationFull | None:
        """The client, as a `PolicedClient`: its redirect URIs are checked against the policy
        whenever the SDK's handlers use one."""
        found = await self._find(client_id)
        return PolicedClient.of(found) if found is not None else None

    async def _find(self, client_id: str) -> OAuthClientInformationFull | None:
        if client_id in self._configured:
            return self._configured[client_id]
        if is_metadata_url(client_id):
            if self.documents is None:
                return None
            try:
                return await self.documents.get(client_id)
            except CIMDError as exc:
                logger.info("client ID metadata document refused: %s", exc)
                return None
        query = "SELECT info, last_used_at FROM authz_clients WHERE client_id = ?"
        async with self._db.execute(query, (client_id,)) as cursor:
            row = await cursor.fetchone()
        if row is None:
            return None
        try:
            info = self._cipher.decrypt(row[0], table="authz_clients", subject=client_id, field="info")
        except DecryptionFailed:
            return None
        now = self._clock()
        if now - float(row[1]) > TOUCH_EVERY_SECONDS:
            await self._db.execute(
                "UPDATE authz_clients SET last_used_at = ? WHERE client_id = ?", (now, client_id)
            )
            await self._db.commit()
        return OAuthClientInformationFull.model_validate_json(info)

    async def register(self, client: OAuthClientInformationFull) -> None:
        sealed = self._cipher.encrypt(
            client.model_dump_json(exclude_none=True),
            table="authz_clients",
            subject=client.client_id,
            field="info",
        )
        now = self._clock()
        await self._db.execute(
            "INSERT INTO authz_clients (client_id, info, created_at, last_used_at) VALUES (?, ?, ?, ?)",
            (client.client_id, sealed, now, now),
        )
        await self._db.commit()

    async def tidy(self) -> int:
        """Forget dynamically registered clients unused for AUTH_SERVER_DCR_UNUSED_DAYS."""
        cursor = await self._db.execute(
            "DELETE FROM authz_clients WHERE last_used_at < ?", (self._clock() - self.unused_seconds,)
        )
        await self._db.commit()
        return cursor.rowcount
