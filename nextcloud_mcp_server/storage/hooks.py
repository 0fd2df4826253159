"""What else goes when a grant goes: hooks called with the subject of a deleted grant (the find
index deletes the user's rows, docs/ADR/0071). A failing hook is logged; the grant stays deleted
and the other hooks still run."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

__all__ = ["GrantHook", "grant_deleted"]

logger = logging.getLogger(__name__)

GrantHook = Callable[[str], Awaitable[object]]


async def grant_deleted(hooks: Sequence[GrantHook], subject: str, deleted: bool) -> bool:
    """Run every hook for `subject`; `deleted` (whether a grant was there) is handed back."""
    for hook in hooks:
        try:
            await hook(subject)
        except Exception:
            logger.exception("deleting what was kept for a deleted grant failed")
    return deleted
