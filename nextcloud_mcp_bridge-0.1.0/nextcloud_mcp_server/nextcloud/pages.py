"""Nextcloud's address, told from the address of one of its pages.

People copy the URL from the browser's address bar (`https://cloud.example.com/index.php/apps/files/?dir=/`)
or from a client's settings (`.../remote.php/dav/files/alice/`). Nextcloud's own pages and APIs sit
under a few fixed first segments below its address; what comes before them is the address."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["address_of_page"]

# The first segment of every path Nextcloud serves below its address (pretty URLs included).
_PAGE = re.compile(r"/(?:index\.php|remote\.php|public\.php|status\.php|ocs|apps|login)(?:/|$)")


def address_of_page(url: str) -> str | None:
    """Nextcloud's address when `url` is one of its pages (query and fragment dropped), else None."""
    parts = urlsplit(url.strip())
    found = _PAGE.search(parts.path)
    if parts.scheme not in ("http", "https") or not parts.hostname or found is None:
        return None
    return urlunsplit((parts.scheme, parts.netloc, parts.path[: found.start()], "", ""))
