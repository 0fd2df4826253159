"""Comments on files (app comments) over DAV: `/remote.php/dav/comments/files/<file id>`.

Listing is the `oc:filter-comments` REPORT, newest first, paged by Nextcloud (at most 100 a
page); a comment is added by POSTing JSON. Nextcloud refuses messages over 1000 characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from nextcloud_mcp_server.nextcloud.dav.file_apps import DavApp, last_segment, xml_request
from nextcloud_mcp_server.nextcloud.dav.files import http_date
from nextcloud_mcp_server.nextcloud.dav.xml import OC, DavResponse
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NotFound
from nextcloud_mcp_server.numbers import ascii_number

__all__ = ["MAX_MESSAGE", "Comment", "CommentsClient", "check_message"]

MAX_MESSAGE = 1000  # characters (IComment::MAX_MESSAGE_LENGTH on 29 and 34)
MAX_PAGE = 100  # Nextcloud's own cap on one page


@dataclass(frozen=True)
class Comment:
    id: int
    author_id: str
    author: str
    message: str
    created: datetime | None
    mentions: list[str]


def check_message(message: str) -> str:
    if not message.strip():
        raise InvalidInput("a comment needs some text")
    if len(message) > MAX_MESSAGE:
        raise InvalidInput(f"a comment is at most {MAX_MESSAGE} characters (this one has {len(message)})")
    return message


def _comment(response: DavResponse) -> Comment | None:
    comment_id = ascii_number(response.text(f"{{{OC}}}id"))
    if comment_id is None or response.text(f"{{{OC}}}verb") not in (None, "comment"):
        return None
    mentions = response.props.get(f"{{{OC}}}mentions")
    ids = [
        (m.findtext(f"{{{OC}}}mentionId") or "")[:100] for m in (mentions if mentions is not None else [])
    ][:50]
    return Comment(
        id=comment_id,
        author_id=(response.text(f"{{{OC}}}actorId") or "")[:200],
        author=(response.text(f"{{{OC}}}actorDisplayName") or "")[:200],
        message=(response.text(f"{{{OC}}}message") or "")[:MAX_MESSAGE],
        created=http_date(response.text(f"{{{OC}}}creationDateTime")),
        mentions=[m for m in ids if m],
    )


class CommentsClient(DavApp):
    def _path(self, file_id: int) -> str:
        return f"/remote.php/dav/comments/files/{file_id}"

    async def list_comments(self, file_id: int, *, limit: int, offset: int = 0) -> list[Comment]:
        limit = max(1, min(limit, MAX_PAGE))
        body = xml_request(
            f'<oc:filter-comments xmlns:oc="{OC}"><oc:limit>{limit}</oc:limit>'
            f"<oc:offset>{offset}</oc:offset></oc:filter-comments>"
        )
        found: list[Comment] = []
        try:
            async for response in self.multistatus("REPORT", self._path(file_id), body, depth=None):
                comment = _comment(response)
                if comment is not None:
                    found.append(comment)
                if len(found) >= limit:
                    break
        except NotFound as exc:
            raise NotFound(
                self.host, "no comments here (the app comments may be disabled)", status=404, body=exc.body
            ) from None
        return found

    async def add(self, file_id: int, message: str) -> int | None:
        """The new comment's id (from `Content-Location`)."""
        body = {"actorType": "users", "verb": "comment", "message": check_message(message)}
        location = await self.send("POST", self._path(file_id), json=body)
        name = last_segment(location or "")
        return ascii_number(name)
