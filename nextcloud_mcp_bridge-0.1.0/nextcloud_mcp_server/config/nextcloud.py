"""The settings of the connection to Nextcloud: where it is, who the server is there, how it
talks to it and within which bounds (ADR 0021, 0035). Part of `Settings` (`settings.py`)."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings

from nextcloud_mcp_server.nextcloud.pages import address_of_page

__all__ = ["NextcloudSettings", "http_url"]


def http_url(value: str, *, what: str = "an http(s) URL, e.g. https://cloud.example.com") -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be {what}")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"must be {what}, without credentials, query or fragment")
    return value.strip().rstrip("/")


class NextcloudSettings(BaseSettings):
    nextcloud_host: str | None = None
    _host_note: str | None = PrivateAttr(default=None)
    nextcloud_username: str | None = None
    nextcloud_password: SecretStr | None = None
    nextcloud_password_file: Path | None = None
    nextcloud_verify_tls: bool = True
    nextcloud_ca_bundle: Path | None = None
    nextcloud_timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    nextcloud_max_retries: int = Field(default=2, ge=0, le=10)
    # Bounds on Nextcloud's answers (ADR 0021): overall time per request, body size, DAV XML shape.
    nextcloud_request_deadline_seconds: float = Field(default=60.0, gt=0, le=3600)
    nextcloud_max_answer_bytes: int = Field(default=32 * 1024 * 1024, ge=64 * 1024)
    nextcloud_max_dav_entry_bytes: int = Field(default=8 * 1024 * 1024, ge=4 * 1024)
    nextcloud_max_xml_depth: int = Field(default=64, ge=8, le=10_000)
    nextcloud_max_connections: int = Field(default=32, ge=1, le=1000)
    # Idle connections are dropped sooner than Nextcloud's web server drops them (Apache: 5 s).
    nextcloud_keepalive_seconds: float = Field(default=4.0, ge=0.5, le=300)

    def nextcloud_http_options(self) -> dict[str, Any]:
        """Keyword arguments of `NextcloudHTTP` that come from these settings."""
        return {
            "timeout": self.nextcloud_timeout_seconds,
            "verify": self.tls_verify(),
            "max_retries": self.nextcloud_max_retries,
            "deadline": self.nextcloud_request_deadline_seconds,
            "max_answer_bytes": self.nextcloud_max_answer_bytes,
            "max_dav_entry_bytes": self.nextcloud_max_dav_entry_bytes,
            "max_xml_depth": self.nextcloud_max_xml_depth,
            "max_connections": self.nextcloud_max_connections,
            "keepalive": self.nextcloud_keepalive_seconds,
        }

    @field_validator("nextcloud_host")
    @classmethod
    def _host_is_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if address_of_page(value) is not None:
            return value.strip()  # a page of Nextcloud: its address is taken below
        return http_url(value)

    @model_validator(mode="after")
    def _host_from_a_page(self) -> NextcloudSettings:
        """A URL copied from the browser (`.../index.php/apps/files/?dir=/`) works, with a warning
        that says which address to set."""
        address = address_of_page(self.nextcloud_host or "")
        if address is not None:
            page = (self.nextcloud_host or "").split("?", 1)[0].split("#", 1)[0]
            self._host_note = (
                f"NEXTCLOUD_HOST {page} is a page of Nextcloud, not its address; using {address}. "
                f"Set NEXTCLOUD_HOST={address}"
            )
            self.nextcloud_host = http_url(address)
        return self

    @property
    def host_note(self) -> str | None:
        """What was said of NEXTCLOUD_HOST when it named a page of Nextcloud (None otherwise)."""
        return self._host_note

    @field_validator("nextcloud_password_file")
    @classmethod
    def _password_file(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError("must be the path of a readable file holding the app password")
        return value

    @model_validator(mode="after")
    def _password_from_file(self) -> NextcloudSettings:
        """NEXTCLOUD_PASSWORD_FILE (Docker secrets and the like): its first line is the password."""
        if self.nextcloud_password_file is None:
            return self
        if self.nextcloud_password is not None:
            raise ValueError("NEXTCLOUD_PASSWORD and NEXTCLOUD_PASSWORD_FILE are both set; keep one")
        lines = self.nextcloud_password_file.read_text(encoding="utf-8").splitlines()
        password = lines[0].strip() if lines else ""
        if not password:
            raise ValueError(f"NEXTCLOUD_PASSWORD_FILE {self.nextcloud_password_file} is empty")
        self.nextcloud_password = SecretStr(password)
        return self

    @field_validator("nextcloud_username")
    @classmethod
    def _username(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if any(c in value for c in ":\r\n\x00"):
            raise ValueError("must not contain ':', line breaks or NUL")
        return value.strip()

    @field_validator("nextcloud_password")
    @classmethod
    def _password(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        return value

    @field_validator("nextcloud_ca_bundle")
    @classmethod
    def _ca_bundle_exists(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError("must be the path of a readable PEM file")
        return value

    @property
    def nextcloud_hostname(self) -> str:
        """The host name shown in error messages (never with credentials)."""
        return urlsplit(self.nextcloud_host or "").netloc or "(no NEXTCLOUD_HOST)"

    def tls_verify(self) -> bool | ssl.SSLContext:
        """What to verify Nextcloud's TLS certificate against."""
        if self.nextcloud_verify_tls and self.nextcloud_ca_bundle:
            return ssl.create_default_context(cafile=str(self.nextcloud_ca_bundle))
        return self.nextcloud_verify_tls
