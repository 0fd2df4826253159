"""The real DAV servers behind the double: WsgiDAV (files) and Radicale (calendars), in-process."""

from __future__ import annotations

import hashlib
import io
import logging
import os
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from typing import Any

import radicale
import radicale.config
from wsgidav.error_printer import ErrorPrinter
from wsgidav.fs_dav_provider import FileResource, FilesystemProvider, FolderResource
from wsgidav.http_authenticator import HTTPAuthenticator
from wsgidav.mw.base_mw import BaseMiddleware
from wsgidav.mw.cors import Cors
from wsgidav.request_resolver import RequestResolver
from wsgidav.wsgidav_app import WsgiDAVApp

from tests.nextcloud_double.users import Accounts

__all__ = ["CALENDARS_PREFIX", "FILES_PREFIX", "file_etag", "folder_etag", "make_radicale", "make_wsgidav"]

FILES_PREFIX = "/remote.php/dav/files"
CALENDARS_PREFIX = "/remote.php/dav/calendars"


def file_etag(path: str) -> str:
    """A file's ETag as Nextcloud 29 keeps it: new when the modification time (in whole seconds)
    changes, so a file replaced within the same second keeps its ETag even with other content
    (recorded: tests/fixtures/nextcloud/webdav_same_second_*.txt). WsgiDAV's own includes the size."""
    found = os.stat(path)
    return f"{found.st_ino:x}-{int(found.st_mtime):x}"


_OC_SIZE = "{http://owncloud.org/ns}size"


class _File(FileResource):  # type: ignore[misc]
    """Nextcloud answers `oc:size` for a file (its length; recorded in webdav_propfind_props.txt),
    and listings ask for that instead of `getcontentlength`."""

    def get_etag(self) -> str:
        return file_etag(self._file_path)

    def get_property_names(self, *, is_allprop: bool) -> list[str]:
        names: list[str] = super().get_property_names(is_allprop=is_allprop)
        return names if is_allprop else [*names, _OC_SIZE]

    def get_property_value(self, name: str) -> Any:
        if name == _OC_SIZE:
            return str(self.get_content_length())
        return super().get_property_value(name)


def folder_etag(path: str) -> str:
    """A folder's ETag as Nextcloud keeps it: new whenever anything in it or below it is added,
    removed, renamed or changed (Nextcloud propagates a change up to the root; checked on 29 and
    34 in tests/toolsets/files/test_folder_listings.py). A directory's own mtime moves only for
    the first of those, and only for its own entries, so the double hashes the whole subtree."""
    digest = hashlib.sha1(usedforsecurity=False)
    own = os.stat(path)
    digest.update(f"{own.st_ino}:{own.st_mtime_ns}".encode())
    for folder, subfolders, names in os.walk(path):
        subfolders.sort()
        for name in sorted(subfolders + names):
            found = os.stat(os.path.join(folder, name))
            digest.update(f"{folder}/{name}:{found.st_ino}:{found.st_mtime_ns}:{found.st_size}".encode())
    return digest.hexdigest()[:20]


class _Folder(FolderResource):  # type: ignore[misc]
    """Nextcloud gives folders an ETag too (`folder_etag`)."""

    def get_etag(self) -> str:
        return folder_etag(self._file_path)

    def support_etag(self) -> bool:
        return True


class _Provider(FilesystemProvider):  # type: ignore[misc]
    def get_resource_inst(self, path: str, environ: dict[str, Any]) -> Any:
        resource = super().get_resource_inst(path, environ)
        if isinstance(resource, FolderResource):
            return _Folder(path, environ, resource._file_path)
        if isinstance(resource, FileResource):
            return _File(path, environ, resource._file_path)
        return resource


class _ModifiedSince(BaseMiddleware):  # type: ignore[misc]
    """Sabre, Nextcloud's DAV server, answers any method 304 when `If-Modified-Since` is not
    earlier than the node's mtime (whole seconds), after authentication and before the method's
    own work: a folder's PROPFIND too (ADR 0094). WsgiDAV applies it to GET alone. A folder's
    mtime here moves only for its own entries (Nextcloud's for anything below it too): what the
    ETag question beside such a listing must catch."""

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        since = environ.get("HTTP_IF_MODIFIED_SINCE")
        provider = environ.get("wsgidav.provider")
        if since and environ["REQUEST_METHOD"] == "PROPFIND" and provider is not None:
            resource = provider.get_resource_inst(environ["PATH_INFO"], environ)
            try:
                asked = parsedate_to_datetime(since).timestamp()
            except (TypeError, ValueError):
                asked = None
            if isinstance(resource, _Folder) and asked is not None:
                modified = int(resource.get_last_modified())
                if modified <= asked:
                    last = formatdate(modified, usegmt=True)
                    start_response("304 Not Modified", [("Last-Modified", last), ("Content-Length", "0")])
                    return [b""]
        return self.next_app(environ, start_response)

    def is_disabled(self) -> bool:
        return False


def make_wsgidav(root: Path, accounts: Accounts) -> Any:
    """One share per user at /remote.php/dav/files/<user>, each readable only by its owner."""
    mapping, users = {}, {}
    for account in accounts:
        folder = root / account.id
        folder.mkdir(parents=True, exist_ok=True)
        share = f"{FILES_PREFIX}/{account.id}"
        mapping[share] = _Provider(str(folder), readonly=False, fs_opts={})
        users[share] = {account.id: {"password": account.internal_password}}
    app = WsgiDAVApp(
        {
            "provider_mapping": mapping,
            "simple_dc": {"user_mapping": users},
            "http_authenticator": {
                "domain_controller": None,
                "accept_basic": True,
                "accept_digest": False,
                "default_to_digest": False,
            },
            "property_manager": True,
            "lock_storage": True,
            "dir_browser": {"enable": False},
            # WsgiDAV's default stack less its directory browser, which compiles its page's
            # template even when disabled (40 ms of CPU a double) and serves assets Nextcloud has
            # not; with Sabre's If-Modified-Since on PROPFIND after authentication (ADR 0094)
            "middleware_stack": [Cors, ErrorPrinter, HTTPAuthenticator, _ModifiedSince, RequestResolver],
            "verbose": 0,
            "logging": {"enable": False, "enable_loggers": []},
        }
    )
    logging.getLogger("wsgidav").setLevel(logging.ERROR)
    return app


def make_radicale(root: Path, accounts: Accounts) -> Any:
    """Radicale with htpasswd auth and owner-only rights, so users are isolated."""
    (root / "collections" / "collection-root").mkdir(parents=True, exist_ok=True)
    htpasswd = root / "users"
    htpasswd.write_text("".join(f"{a.id}:{a.internal_password}\n" for a in accounts))
    config = radicale.config.load()
    config.update(
        {
            "auth": {
                "type": "htpasswd",
                "htpasswd_filename": str(htpasswd),
                "htpasswd_encryption": "plain",
                "delay": "0",
            },
            "rights": {"type": "owner_only"},
            # Radicale's own tests' setting: no fsync after each write (a double's data need not
            # survive a crash of the machine; the syncs cost 50 ms a double on a busy disk)
            "storage": {"filesystem_folder": str(root / "collections"), "_filesystem_fsync": "False"},
            "web": {"type": "none"},
            "logging": {"level": "warning"},
        },
        "nextcloud-double",
        privileged=True,
    )
    # the level the configuration names (Radicale applies it only when it runs as its own server)
    logging.getLogger("radicale").setLevel(logging.WARNING)
    return _IfMatchList(radicale.Application(config))


class _IfMatchList:
    """Sabre, Nextcloud's DAV server, takes a list of ETags in If-Match and acts when any of them
    is the current one (RFC 9110 13.1.1); Radicale compares the whole header with its ETag. A
    list is resolved here by asking Radicale for the current ETag first."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        header = environ.get("HTTP_IF_MATCH", "")
        if "," in header and environ["REQUEST_METHOD"] in ("PUT", "DELETE"):
            tags = [tag.strip() for tag in header.split(",") if tag.strip()]
            current = self._current_etag(environ)
            environ = dict(environ, HTTP_IF_MATCH=current if current in tags else tags[0])
        return self.app(environ, start_response)

    def _current_etag(self, environ: dict[str, Any]) -> str | None:
        found: list[str] = []

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
            found.extend(value for name, value in headers if name.lower() == "etag")

        probe = {k: v for k, v in environ.items() if k not in ("CONTENT_LENGTH", "CONTENT_TYPE")}
        probe.update(REQUEST_METHOD="GET", HTTP_IF_MATCH="", CONTENT_LENGTH="0")
        probe["wsgi.input"] = io.BytesIO(b"")
        for _ in self.app(probe, start):
            pass
        return found[0] if found else None
