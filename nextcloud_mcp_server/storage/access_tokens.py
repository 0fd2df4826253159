"""The one Nextcloud access token per user that every replica uses (docs/ADR/0063).

Nextcloud's OAuth2 app (and an identity provider that rotates) replaces the refresh token on
every refresh and invalidates the access token minted before; replicas that each refreshed for
themselves made each other's tokens stale and, refreshing within seconds of each other, broke
grants. So the access token minted from a grant is kept here, sealed like the grant's secret and
bound to the grant's version: a replica reads it before it takes the refresh lock and again under
the lock, and refreshes only when none is valid - one refresh per user per token lifetime, however
many replicas. A row whose grant changed (rotated, replaced, deleted) is never returned: the read
joins on the grant's current version, and deleting a grant deletes its row.

The value is opaque here (the credential, serialised by `auth/offline.py`); what is stored is
sealed with the store's cipher for table `access_tokens`, the subject and field `credential`.
A row sealed with a key that is no longer configured reads as absent (it is short-lived; the next
refresh replaces it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nextcloud_mcp_server.storage.connection import Connection
from nextcloud_mcp_server.storage.crypto import Cipher, DecryptionFailed

__all__ = ["SharedToken", "SharedTokens"]


@dataclass(frozen=True)
class SharedToken:
    value: str  # the serialised credential
    refresh_at: float  # when it must no longer be handed out (the refresh margin is included)
    grant_version: int

    def __repr__(self) -> str:  # never the token
        return f"SharedToken(refresh_at={self.refresh_at!r}, grant_version={self.grant_version!r})"


class SharedTokens:
    """The `access_tokens` table, over the store's connection and cipher."""

    def __init__(self, connection: Callable[[], Connection], cipher: Cipher) -> None:
        self._connection = connection
        self._cipher = cipher

    def _where(self, subject: str) -> dict[str, str]:
        return {"table": "access_tokens", "subject": subject, "field": "credential"}

    async def get(self, subject: str) -> SharedToken | None:
        """The token minted from `subject`'s current grant, if any (expired or not)."""
        async with self._connection().execute(
            "SELECT a.credential, a.refresh_at, a.grant_version FROM access_tokens a "
            "JOIN grants g ON g.subject = a.subject AND g.version = a.grant_version WHERE a.subject = ?",
            (subject,),
        ) as cursor:
            row = await cursor.fetchone()
        if row is None:
            return None
        try:
            value = self._cipher.decrypt(str(row[0]), **self._where(subject))
        except DecryptionFailed:
            return None
        return SharedToken(value, float(row[1]), int(row[2]))

    async def put(self, subject: str, grant_version: int, value: str, refresh_at: float) -> bool:
        """Keep `value`, minted from version `grant_version` of the grant; False (nothing kept) when
        that version is no longer the grant's."""
        sealed = self._cipher.encrypt(value, **self._where(subject))
        conn = self._connection()
        cursor = await conn.execute(
            "INSERT INTO access_tokens (subject, grant_version, credential, key_id, refresh_at) "
            "SELECT subject, version, ?, ?, ? FROM grants WHERE subject = ? AND version = ? "
            "ON CONFLICT(subject) DO UPDATE SET grant_version = excluded.grant_version, "
            "credential = excluded.credential, key_id = excluded.key_id, refresh_at = excluded.refresh_at",
            (sealed, self._cipher.current_key_id, refresh_at, subject, grant_version),
        )
        await conn.commit()
        return int(cursor.rowcount) == 1

    async def drop(self, subject: str) -> None:
        """Forget `subject`'s token (Nextcloud refused it)."""
        conn = self._connection()
        await conn.execute("DELETE FROM access_tokens WHERE subject = ?", (subject,))
        await conn.commit()
