"""What the consent store keeps: its schema (with forward migrations) and its records."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nextcloud_mcp_server.storage.errors import DecryptionFailed, GrantUnreadable

if TYPE_CHECKING:
    from nextcloud_mcp_server.storage.crypto import Cipher

__all__ = [
    "GRANT_COLUMNS",
    "MIGRATIONS",
    "AuditEvent",
    "ConsentError",
    "ConsentState",
    "Elicitation",
    "Grant",
    "StoreError",
    "StoreUnavailable",
    "grant_from_row",
    "opening_refused",
    "state_hash",
]

MIGRATIONS: list[str] = [
    # 1: the first schema
    """
    CREATE TABLE grants (
        subject TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        kind TEXT NOT NULL,
        secret TEXT NOT NULL,
        key_id TEXT NOT NULL,
        scopes TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        version INTEGER NOT NULL DEFAULT 1
    );
    CREATE TABLE elicitations (
        id TEXT PRIMARY KEY,
        subject TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        opened_at REAL,
        completed_at REAL,
        error TEXT
    );
    CREATE INDEX elicitations_pending ON elicitations (status, expires_at);
    CREATE TABLE oauth_states (
        state_hash TEXT PRIMARY KEY,
        elicitation_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        verifier TEXT NOT NULL,
        nonce TEXT NOT NULL,
        expires_at REAL NOT NULL,
        used_at REAL
    );
    CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at REAL NOT NULL,
        subject TEXT NOT NULL,
        event TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX audit_subject ON audit (subject, at);
    """,
    # 2: Nextcloud as the consent provider - an app password's login name, and the Nextcloud user
    # a consent is expected to come from
    """
    ALTER TABLE grants ADD COLUMN login TEXT NOT NULL DEFAULT '';
    ALTER TABLE elicitations ADD COLUMN user_id TEXT NOT NULL DEFAULT ''
    """,
    # 3: the Nextcloud access token every replica shares (storage/access_tokens.py, ADR 0063)
    """
    CREATE TABLE access_tokens (
        subject TEXT PRIMARY KEY,
        grant_version INTEGER NOT NULL,
        credential TEXT NOT NULL,
        key_id TEXT NOT NULL,
        refresh_at REAL NOT NULL
    )
    """,
    # 4: the person's answer to indexing their Nextcloud for nc_find, sealed (storage/find_consent.py)
    """
    ALTER TABLE grants ADD COLUMN find_consent TEXT
    """,
]


class StoreError(Exception):
    """The store cannot be used (unreadable file, keys that do not fit the stored secrets)."""


class StoreUnavailable(StoreError):
    """The database cannot be reached right now (restarting, down, the network): worth retrying
    in a few seconds. `lost_connection`: a connection broke under a statement, which may be run
    once more on a new connection. Answered 503 with Retry-After at the HTTP front."""

    retry_after = 5

    def __init__(self, reason: str, *, lost_connection: bool = False) -> None:
        super().__init__(f"the store cannot be reached ({reason}); try again in a few seconds")
        self.lost_connection = lost_connection


class ConsentError(Exception):
    """A consent step is not allowed (link expired, already used, unknown)."""


@dataclass(frozen=True)
class Grant:
    subject: str
    user_id: str
    provider: str  # oidc | nextcloud-oauth2 | login-flow-v2
    kind: str  # refresh_token | app_password
    secret: str
    scopes: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    version: int = 1
    login: str = ""  # the login name an app password goes with (Login Flow v2), if not user_id

    def __repr__(self) -> str:  # never the secret
        return f"Grant(subject={self.subject!r}, user_id={self.user_id!r}, provider={self.provider!r})"


@dataclass(frozen=True)
class Elicitation:
    id: str
    subject: str
    status: str  # pending | complete | failed | expired
    created_at: float
    expires_at: float
    opened_at: float | None = None
    completed_at: float | None = None
    error: str | None = None
    user_id: str = ""  # the Nextcloud user the consent must come from


@dataclass(frozen=True)
class ConsentState:
    elicitation_id: str
    subject: str
    verifier: str
    nonce: str


@dataclass(frozen=True)
class AuditEvent:
    at: float
    subject: str
    event: str
    detail: str


# The columns of `grants` that make a `Grant`, in its field order (`grant_from_row`).
GRANT_COLUMNS = "subject, user_id, provider, kind, secret, scopes, created_at, updated_at, version, login"


def grant_from_row(row: Sequence[Any], cipher: Cipher) -> Grant:
    """A `Grant` from a row of `GRANT_COLUMNS`, its secret decrypted; `GrantUnreadable` if it
    cannot be (the row is left as it is, for its owner to replace or delete)."""
    subject = str(row[0])
    try:
        secret = cipher.decrypt(str(row[4]), table="grants", subject=subject, field="secret")
    except DecryptionFailed as exc:
        raise GrantUnreadable(subject, str(exc)) from None
    user_id, provider, kind, _, scopes, created_at, updated_at, version, login = row[1:]
    return Grant(subject, user_id, provider, kind, secret, scopes, created_at, updated_at, version, login)


def state_hash(state: str) -> str:
    """What the store keeps of a consent `state`: its SHA-256, so a copy of the database cannot
    complete a sign-in that is under way."""
    return hashlib.sha256(state.encode()).hexdigest()


def opening_refused(found: Elicitation | None) -> ConsentError:
    """Why a consent link could not be opened, from what the store holds of it after the attempt."""
    if found is None:
        return ConsentError("this consent link is unknown")
    if found.status != "pending":
        return ConsentError(f"this consent link is no longer valid ({found.status})")
    if found.opened_at is not None:
        return ConsentError("this consent link was already used")
    return ConsentError("this consent link has expired")
