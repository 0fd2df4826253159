"""Re-encrypting the store's secrets under the current key (`nextcloud-mcp-bridge keys rotate`)."""

from __future__ import annotations

from nextcloud_mcp_server.storage.crypto import Cipher, DecryptionFailed
from nextcloud_mcp_server.storage.engines import Engine
from nextcloud_mcp_server.storage.find_consent import where as consent_where

__all__ = ["rotate_keys"]


async def rotate_keys(engine: Engine, cipher: Cipher) -> tuple[int, list[str], int]:
    """Re-encrypt every secret under the current key, in one transaction; returns how many were
    rewritten, the grants that could not be read and how many consent states were dropped.
    Nothing unreadable stops it: a grant that cannot be decrypted is left as it is and named (its
    owner disconnects or connects again); a consent state that cannot be decrypted (its key was
    removed; it lives ten minutes) is deleted and counted - that sign-in has to start again.
    Shared access tokens under an older key are deleted: they live an hour, and the next refresh
    seals its token under the current key."""
    rewritten, unreadable, dropped = 0, [], 0
    current, lock = cipher.current_key_id, engine.row_lock
    async with engine.transaction() as tx:
        await tx.execute("DELETE FROM access_tokens WHERE key_id != ?", (current,))
        async with tx.execute(
            f"SELECT subject, secret FROM grants WHERE key_id != ?{lock}",  # noqa: S608 - constants
            (current,),
        ) as cur:
            grants = list(await cur.fetchall())
        for subject, sealed in grants:
            where = {"table": "grants", "subject": str(subject), "field": "secret"}
            try:
                plain = cipher.decrypt(str(sealed), **where)
            except DecryptionFailed:
                unreadable.append(str(subject))
                continue
            await tx.execute(
                "UPDATE grants SET secret = ?, key_id = ? WHERE subject = ?",
                (cipher.encrypt(plain, **where), current, subject),
            )
            rewritten += 1
        async with tx.execute(
            f"SELECT subject, find_consent FROM grants WHERE find_consent IS NOT NULL{lock}"  # noqa: S608
        ) as cur:
            consents = list(await cur.fetchall())
        for subject, sealed in consents:
            if Cipher.key_id_of(str(sealed)) == current:
                continue
            bound = consent_where(str(subject))
            try:  # an answer that cannot be read is withdrawn: the person is asked again
                resealed: str | None = cipher.encrypt(cipher.decrypt(str(sealed), **bound), **bound)
            except DecryptionFailed:
                resealed = None
            await tx.execute("UPDATE grants SET find_consent = ? WHERE subject = ?", (resealed, subject))
            rewritten += resealed is not None
        async with tx.execute(f"SELECT state_hash, verifier FROM oauth_states{lock}") as cur:  # noqa: S608
            states = list(await cur.fetchall())
        for digest, sealed in states:
            if Cipher.key_id_of(str(sealed)) == current:
                continue
            where = {"table": "oauth_states", "subject": str(digest), "field": "verifier"}
            try:
                plain = cipher.decrypt(str(sealed), **where)
            except DecryptionFailed:
                await tx.execute("DELETE FROM oauth_states WHERE state_hash = ?", (digest,))
                dropped += 1
                continue
            await tx.execute(
                "UPDATE oauth_states SET verifier = ? WHERE state_hash = ?",
                (cipher.encrypt(plain, **where), digest),
            )
            rewritten += 1
    return rewritten, unreadable, dropped
