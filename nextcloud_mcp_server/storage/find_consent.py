"""A person's answer to indexing their Nextcloud for `nc_find` (docs/ADR/0084), kept with their
grant: it goes when the grant goes (deleting the grant deletes the row), and it is sealed like the
grant's secret, bound to table `grants`, the subject and field `find_consent`, so a row written by
someone without the key (or copied from another subject) reads as never asked, not as agreed.

The value is `agreed` or `refused` and when it was answered. Re-sealed under the current key by
`key_rotation.rotate_keys`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from nextcloud_mcp_server.storage.connection import Connection
from nextcloud_mcp_server.storage.crypto import Cipher, DecryptionFailed

__all__ = ["Answer", "FindConsent", "FindConsents", "where"]

Answer = Literal["agreed", "refused"]


def where(subject: str) -> dict[str, str]:
    """What a sealed answer is bound to."""
    return {"table": "grants", "subject": subject, "field": "find_consent"}


@dataclass(frozen=True)
class FindConsent:
    answer: Answer
    at: float  # when it was given


class FindConsents:
    """The `find_consent` column of `grants`, over the store's connection and cipher."""

    def __init__(self, connection: Callable[[], Connection], cipher: Cipher) -> None:
        self._connection = connection
        self._cipher = cipher

    def _open(self, subject: str, sealed: object) -> FindConsent | None:
        if sealed is None:
            return None
        try:
            data = json.loads(self._cipher.decrypt(str(sealed), **where(subject)))
        except (DecryptionFailed, ValueError):
            return None  # unreadable: asked again
        answer = data.get("answer") if isinstance(data, dict) else None
        if answer not in ("agreed", "refused"):
            return None
        return FindConsent(answer, float(data.get("at", 0.0)))

    async def get(self, subject: str) -> FindConsent | None:
        """`subject`'s answer; None when never asked, withdrawn, unreadable or without a grant."""
        async with self._connection().execute(
            "SELECT find_consent FROM grants WHERE subject = ?", (subject,)
        ) as cursor:
            row = await cursor.fetchone()
        return None if row is None else self._open(subject, row[0])

    async def put(self, subject: str, answer: Answer | None, *, at: float | None = None) -> bool:
        """Keep `answer` (None withdraws it: the next nc_find asks again); False when `subject`
        has no grant to keep it with."""
        sealed = None
        if answer is not None:
            value = json.dumps({"answer": answer, "at": time.time() if at is None else at})
            sealed = self._cipher.encrypt(value, **where(subject))
        conn = self._connection()
        cursor = await conn.execute("UPDATE grants SET find_consent = ? WHERE subject = ?", (sealed, subject))
        await conn.commit()
        return int(cursor.rowcount) == 1

    async def agreed(self, limit: int) -> list[str]:
        """Subjects whose grant carries a readable `agreed`, at most `limit` (background sync)."""
        async with self._connection().execute(
            "SELECT subject, find_consent FROM grants WHERE find_consent IS NOT NULL "
            "ORDER BY subject LIMIT ?",
            (limit,),
        ) as cursor:
            rows = list(await cursor.fetchall())
        return [str(s) for s, sealed in rows if (c := self._open(str(s), sealed)) and c.answer == "agreed"]
