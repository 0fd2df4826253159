"""Settings of the store and of several replicas: the encryption keys, where grants are kept, the
replica's name and the limits of the stateless protocol era. Part of `Settings` (`settings.py`);
docs/ADR/0024, 0054 and 0055.

The keys in TOKEN_ENCRYPTION_KEY seal everything the store keeps and, derived for that purpose
alone, the `requestState` of 2026-07-28 calls (`auth/request_state.py`): every replica needs the
same ones, so REPLICA_ID without them is refused at start.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Self
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings

__all__ = ["ReplicaSettings"]


class ReplicaSettings(BaseSettings):
    token_encryption_key: SecretStr | None = None
    token_encryption_key_file: Path | None = None
    store_path: Path = Path("data/nextcloud-mcp.sqlite3")
    # several replicas: a shared PostgreSQL store instead of the SQLite file, and this replica's
    # name, which prefixes its MCP session ids so a balancer can route by it
    store_url: SecretStr | None = None
    replica_id: str = ""
    # calls of the stateless 2026-07-28 protocol, per user (web/call_limits.py, ADR 0054)
    mcp_stateless_calls_per_minute: int = Field(default=1200, ge=1, le=600_000)
    mcp_stateless_calls_in_flight_per_user: int = Field(default=32, ge=1, le=100_000)

    @field_validator("token_encryption_key_file")
    @classmethod
    def _key_file(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError("must be the path of a readable file with one key per line")
        return value

    @field_validator("store_url")
    @classmethod
    def _store_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        parts = urlsplit(value.get_secret_value().strip())
        if parts.scheme not in ("postgresql", "postgres") or parts.fragment:
            raise ValueError("must be a postgresql:// URL, e.g. postgresql://mcp:secret@db:5432/mcp")
        return SecretStr(value.get_secret_value().strip())

    @field_validator("replica_id")
    @classmethod
    def _replica_id(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9]{0,16}", value.strip()):
            raise ValueError("must be up to 16 lower-case letters and digits, e.g. a, b, mcp1")
        return value.strip()

    @model_validator(mode="after")
    def _replicas_share_keys(self) -> Self:
        if self.replica_id and not (self.token_encryption_key or self.token_encryption_key_file):
            raise ValueError(
                "REPLICA_ID needs TOKEN_ENCRYPTION_KEY (or TOKEN_ENCRYPTION_KEY_FILE), the same on "
                "every replica: a call that asks the person something (an approval, a consent) is "
                "continued on whichever replica the answer reaches, which must be able to read it; "
                "create one with `nextcloud-mcp-bridge keys generate`"
            )
        return self

    def encryption_keys(self) -> list[str]:
        """The configured encryption keys, current first (TOKEN_ENCRYPTION_KEY, then the file)."""
        keys = []
        if self.token_encryption_key:
            keys += [k.strip() for k in self.token_encryption_key.get_secret_value().split(",") if k.strip()]
        if self.token_encryption_key_file:
            lines = self.token_encryption_key_file.read_text().splitlines()
            keys += [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        return keys
