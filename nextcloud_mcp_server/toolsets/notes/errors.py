"""What the Notes API's refusals mean, as errors of this package."""

from __future__ import annotations

from pydantic import ValidationError

from nextcloud_mcp_server.nextcloud.errors import BearerRefused, InvalidResponse, NotFound, PreconditionFailed
from nextcloud_mcp_server.nextcloud.models import Note

__all__ = [
    "NOTES_APP_MISSING",
    "NoteConflict",
    "NotesAppMissing",
    "bearer_refused_error",
    "malformed",
    "no_such_note",
]


def bearer_refused_error(host: str) -> BearerRefused:
    return BearerRefused(
        host,
        "the Notes API refuses OAuth Bearer tokens ('CORS requires basic auth', a Nextcloud "
        "limitation fixed in later releases) and did not accept the token as a Basic password "
        "either; use offline access with NEXTCLOUD_CONSENT_PROVIDER=nextcloud-oauth2 or "
        "login-flow-v2, or upgrade Nextcloud",
        status=401,
    )


class NoteConflict(PreconditionFailed):
    """The note changed since its ETag was read. `current` is the note as it is now."""

    def __init__(self, host: str, current: Note) -> None:
        super().__init__(
            host,
            f"note {current.id} was changed by someone else since it was read "
            f"(its ETag is now {current.etag}); nothing was overwritten",
            status=412,
        )
        self.current = current


def malformed(host: str, error: ValidationError) -> InvalidResponse:
    """A note of the answer that does not have a note's fields: where, and what is wrong."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the note"
    return InvalidResponse(host, f"the Notes API answered a malformed note ({where}: {first['msg'][:200]})")


NOTES_APP_MISSING = (
    "the Notes app is not installed or not enabled for this account; an administrator enables it "
    "in Nextcloud under Apps (or: occ app:enable notes)"
)


class NotesAppMissing(NotFound):
    """404 from Nextcloud itself, not from the Notes API: the app is not there for this account."""


def no_such_note(host: str, note_id: int, exc: NotFound) -> NotFound:
    if isinstance(exc, NotesAppMissing):
        return exc
    return NotFound(host, f"note {note_id} does not exist", status=404, body=exc.body)
