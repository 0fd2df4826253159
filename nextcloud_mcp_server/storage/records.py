"""What the consent store keeps: its schema (with forward migrations) and its records."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "MIGRATIONS",
    "AuditEvent",
    "ConsentError",
    "ConsentState",
    "Elicitation",
    "Grant",
    "StoreError",
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
]


class StoreError(Exception):
    """The store cannot be used (unreadable file, keys that do not fit the stored secrets)."""


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
