"""Authorization failures a tool call can meet (kept import-light: the tool registry uses them)."""

from __future__ import annotations

__all__ = ["GrantMissing", "OIDCUnavailable"]


class OIDCUnavailable(Exception):
    """The identity provider could not be reached or answered nonsense."""


class GrantMissing(Exception):
    """This user has not (or no longer) granted access to their Nextcloud. `note`: what became of
    the grant just dropped, for the person (told with the request to connect again)."""

    def __init__(self, subject: str, note: str = "") -> None:
        super().__init__(subject)
        self.note = note
