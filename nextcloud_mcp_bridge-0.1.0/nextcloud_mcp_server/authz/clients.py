"""The clients this authorization server knows: pre-registered (AUTH_SERVER_CLIENTS), registered
dynamically (RFC 7591; kept sealed in the store, forgotten when unused for
AUTH_SERVER_DCR_UNUSED_DAYS), and client ID metadata documents (a URL as client_id; `cimd.py`)."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull
from pydantic import AnyUrl

from nextcloud_mcp_server.authz.cimd import CIMDError, MetadataDocuments, is_metadata_url
from nextcloud_mcp_server.inbound.client_policy import redirect_uri_problem
from nextcloud_mcp_server.storage.connection import Connection
from nextcloud_mcp_server.storage.crypto import Cipher, DecryptionFailed

__all__ = ["Clients", "PolicedClient", "RegistrationsFull"]

logger = logging.getLogger(__name__)

TOUCH_EVERY_SECONDS = 3600.0
WARN_EVERY_SECONDS = 3600.0


# Insert only while fewer than the cap of registrations never used (atomic on SQLite; on
# PostgreSQL concurrent registrations may overshoot by the few that race).
_REGISTER = (
    "INSERT INTO authz_clients (client_id, info, created_at, last_used_at) SELECT ?, ?, ?, ? "
    "WHERE (SELECT COUNT(*) FROM authz_clients WHERE used_at IS NULL) < ?"
)


class RegistrationsFull(Exception):
    """As many unused registrations are stored as AUTH_SERVER_DCR_MAX_UNUSED allows; str() says so
    and `retry_after` is when the oldest of them expires (seconds)."""

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(
            f"this server keeps at most {limit} client registrations that were never used "
            "(AUTH_SERVER_DCR_MAX_UNUSED) and has that many; try again later, or register by client "
            "ID metadata document"
        )
        self.retry_after = retry_after


class PolicedClient(OAuthClientInformationFull):
    """A client whose redirect URIs the SDK's handlers check against the policy as well
    (`client_policy.py`): a URI stored before the policy existed is refused at /authorize, and
    never used for an error redirect either."""

    @classmethod
    def of(cls, client: OAuthClientInformationFull) -> PolicedClient:
        return cls.model_validate(client.model_dump(exclude_none=True))

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        # the policy first: a refused URI is never echoed in the SDK's "not registered" message,
        # which a person's browser shows
        problem = redirect_uri_problem(str(redirect_uri)) if redirect_uri is not None else None
        if problem is not None:
            raise InvalidRedirectUriError(problem)
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
        max_unused: int = 1000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self._cipher = cipher
        self.scopes = scopes
        self.documents = documents
        self.unused_seconds = unused_seconds
        self.max_unused = max_unused
        self._full_warned_at = float("-inf")
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
        cursor = await self._db.execute(_REGISTER, (client.client_id, sealed, now, now, self.max_unused))
        await self._db.commit()
        if cursor.rowcount != 1:
            query = "SELECT MIN(last_used_at) FROM authz_clients WHERE used_at IS NULL"
            async with self._db.execute(query) as found:
                row = await found.fetchone()
            oldest = float(row[0]) if row is not None and row[0] is not None else now
            if now - self._full_warned_at > WARN_EVERY_SECONDS:  # a flood: say it once an hour
                self._full_warned_at = now
                logger.warning(
                    "dynamic client registration refused: %d unused registrations stored "
                    "(AUTH_SERVER_DCR_MAX_UNUSED); a registration flood?",
                    self.max_unused,
                )
            raise RegistrationsFull(self.max_unused, max(1, math.ceil(oldest + self.unused_seconds - now)))

    async def used(self, client_id: str) -> None:
        """The client got a token: it no longer counts as an unused registration."""
        await self._db.execute(
            "UPDATE authz_clients SET used_at = ? WHERE client_id = ? AND used_at IS NULL",
            (self._clock(), client_id),
        )
        await self._db.commit()

    async def tidy(self) -> int:
        """Forget dynamically registered clients unused for AUTH_SERVER_DCR_UNUSED_DAYS."""
        cursor = await self._db.execute(
            "DELETE FROM authz_clients WHERE last_used_at < ?", (self._clock() - self.unused_seconds,)
        )
        await self._db.commit()
        return cursor.rowcount
