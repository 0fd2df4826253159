"""The real DAV servers behind the double: WsgiDAV (files) and Radicale (calendars), in-process."""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path
from typing import Any

import radicale
import radicale.config
from wsgidav.fs_dav_provider import FileResource, FilesystemProvider, FolderResource
from wsgidav.wsgidav_app import WsgiDAVApp

from tests.nextcloud_double.users import Accounts

__all__ = ["CALENDARS_PREFIX", "FILES_PREFIX", "file_etag", "make_radicale", "make_wsgidav"]

FILES_PREFIX = "/remote.php/dav/files"
CALENDARS_PREFIX = "/remote.php/dav/calendars"


def file_etag(path: str) -> str:
    """A file's ETag as Nextcloud 29 keeps it: new when the modification time (in whole seconds)
    changes, so a file replaced within the same second keeps its ETag even with other content
    (recorded: tests/fixtures/nextcloud/webdav_same_second_*.txt). WsgiDAV's own includes the size."""
    found = os.stat(path)
    return f"{found.st_ino:x}-{int(found.st_mtime):x}"


class _File(FileResource):  # type: ignore[misc]
    def get_etag(self) -> str:
        return file_etag(self._file_path)


def _newest_below(path: str) -> int:
    """The latest change time (ns) of a folder and everything below it."""
    newest = os.stat(path).st_mtime_ns
    for folder, names, files in os.walk(path):
        for name in (*names, *files):
            try:
                newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
            except OSError:
                continue
    return newest


class _Folder(FolderResource):  # type: ignore[misc]
    """Nextcloud gives folders an ETag too, and propagates it: it changes when anything below
    the folder changes, a file in a sub-folder included."""

    def get_etag(self) -> str:
        return f"{self.file_stat.st_ino:x}{_newest_below(self._file_path):x}"

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
            "storage": {"filesystem_folder": str(root / "collections")},
            "web": {"type": "none"},
            "logging": {"level": "warning"},
        },
        "nextcloud-double",
        privileged=True,
    )
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
