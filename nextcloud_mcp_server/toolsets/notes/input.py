"""What may be a note's title, category and content: checked before anything is sent."""

from __future__ import annotations

import re

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.names import check_visible

__all__ = ["InvalidNoteInput", "check_category", "check_content", "check_title"]


class InvalidNoteInput(InvalidInput):
    """A title, category or content that would be refused or mangled; nothing was sent."""


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_title(title: str) -> str:
    """A usable note title (it becomes a file name), stripped; raises `InvalidNoteInput`."""
    cleaned = title.strip()
    if not cleaned:
        raise InvalidNoteInput("title must not be empty")
    if _CONTROL.search(cleaned):
        raise InvalidNoteInput("title must be one line without control characters")
    check_visible(cleaned, "title")
    if len(cleaned) > 200:
        raise InvalidNoteInput(f"title must be at most 200 characters (got {len(cleaned)})")
    return cleaned


def check_category(category: str) -> str:
    """A category is a folder path below the notes folder: `Work` or `Work/Projects`."""
    cleaned = category.strip()
    if not cleaned:
        return ""
    if _CONTROL.search(cleaned) or "\\" in cleaned:
        raise InvalidNoteInput("category must not contain control characters or backslashes")
    check_visible(cleaned, "category")
    if cleaned.startswith("/") or cleaned.endswith("/"):
        raise InvalidNoteInput("category must not start or end with '/' (use e.g. 'Work/Projects')")
    segments = cleaned.split("/")
    if any(not s.strip() or s.strip() in (".", "..") for s in segments):
        raise InvalidNoteInput("category segments must not be empty, '.' or '..'")
    if len(cleaned) > 255:
        raise InvalidNoteInput("category must be at most 255 characters")
    return "/".join(s.strip() for s in segments)


def check_content(content: str, max_bytes: int) -> str:
    size = len(content.encode("utf-8"))
    if size > max_bytes:
        raise InvalidNoteInput(
            f"content is {size} bytes, over the limit of {max_bytes} (NOTES_MAX_CONTENT_BYTES)"
        )
    return content
