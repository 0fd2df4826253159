"""AUTH_SERVER_* settings: this server as its own OAuth authorization server (docs/ADR/0025).

`Settings` inherits them; every one is bounded. The rules across variables (no OIDC_ISSUER, a
consent provider that is Nextcloud itself, a sign-in bound to the browser, an encryption key, an
https issuer) are checked at start-up by `problems_for_auth_server()`, one line each.

People sign in through Nextcloud's OAuth2 app, whose answer comes back to the browser that
started; a Login Flow v2 sign-in hands the account to whoever opens its link, so it is only
used with AUTH_SERVER_LOGIN_FLOW_SIGNIN=true (docs/ADR/0033).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings

from nextcloud_mcp_server.inbound.client_policy import registration_problem

__all__ = ["AuthServerSettings", "SigninProvider"]

SigninProvider = Literal["nextcloud-oauth2", "login-flow-v2"]


def _clients(value: str) -> list[dict[str, object]]:
    try:
        parsed = json.loads(value) if value.strip() else []
    except ValueError:
        raise ValueError("must be a JSON list of clients") from None
    if not isinstance(parsed, list) or len(parsed) > 100:
        raise ValueError("must be a JSON list of at most 100 clients")
    for entry in parsed:
        if not isinstance(entry, dict) or not isinstance(entry.get("client_id"), str):
            raise ValueError('needs a "client_id" text in every client')
        uris = entry.get("redirect_uris")
        if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
            raise ValueError(f'needs "redirect_uris" (a list of URLs) for client {entry["client_id"]}')
        problem = registration_problem(uris, entry.get("client_name"))
        if problem is not None:
            raise ValueError(f"client {entry['client_id']}: {problem}")
        secret = entry.get("client_secret")
        if secret is not None and (not isinstance(secret, str) or len(secret) < 16):
            raise ValueError(f"client {entry['client_id']}: client_secret must be text of 16+ characters")
    return parsed


class AuthServerSettings(BaseSettings):
    auth_server_enabled: bool = False
    auth_server_grant_at_signin: bool = True
    auth_server_login_flow_signin: bool = False
    auth_server_request_ttl_seconds: int = Field(default=600, ge=60, le=3600)
    auth_server_access_token_seconds: int = Field(default=600, ge=60, le=3600)
    auth_server_refresh_token_days: float = Field(default=30.0, gt=0, le=365)
    auth_server_signing_algorithm: Literal["ES256", "RS256"] = "ES256"
    auth_server_key_max_age_days: float = Field(default=90.0, ge=1, le=3650)
    auth_server_clients: str = ""
    auth_server_dcr_enabled: bool = True
    auth_server_dcr_per_minute: int = Field(default=10, ge=1, le=10_000)
    auth_server_dcr_unused_days: float = Field(default=7.0, gt=0, le=365)
    auth_server_dcr_max_unused: int = Field(default=1000, ge=10, le=1_000_000)
    auth_server_cimd_enabled: bool = True
    auth_server_cimd_allow_private: bool = False
    auth_server_cimd_ca_bundle: Path | None = None
    auth_server_cimd_max_bytes: int = Field(default=16 * 1024, ge=1024, le=256 * 1024)
    auth_server_cimd_timeout_seconds: float = Field(default=5.0, gt=0, le=30)
    auth_server_cimd_cache_seconds: float = Field(default=300.0, ge=0, le=86_400)

    @field_validator("auth_server_clients")
    @classmethod
    def _valid_clients(cls, value: str) -> str:
        _clients(value)
        return value

    @field_validator("auth_server_cimd_ca_bundle")
    @classmethod
    def _bundle_exists(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError("must be the path of a readable PEM file")
        return value

    def configured_clients(self) -> list[dict[str, object]]:
        """Pre-registered clients (AUTH_SERVER_CLIENTS): client_id, redirect_uris, optional
        client_name and client_secret (without one the client is public and must use PKCE)."""
        return _clients(self.auth_server_clients)

    @property
    def signin_provider(self) -> SigninProvider:
        """How people sign in at this authorization server: Nextcloud's OAuth2 app, bound to the
        browser, unless Login Flow v2 was explicitly accepted (docs/ADR/0033)."""
        return "login-flow-v2" if self.auth_server_login_flow_signin else "nextcloud-oauth2"

    def problems_for_auth_server(
        self,
        *,
        oidc_issuer: str | None,
        consent_provider: str,
        has_oauth2_client: bool,
        has_keys: bool,
        public_url: str,
    ) -> list[str]:
        """What stops AUTH_SERVER_ENABLED=true from working, one line each."""
        if not self.auth_server_enabled:
            return []
        problems = []
        if oidc_issuer is not None:
            problems.append(
                "OIDC_ISSUER must be unset with AUTH_SERVER_ENABLED=true: this server issues the tokens"
            )
        if consent_provider == "oidc":
            problems.append(
                "NEXTCLOUD_CONSENT_PROVIDER must be nextcloud-oauth2 or login-flow-v2 with "
                "AUTH_SERVER_ENABLED=true: people sign in at Nextcloud (there is no identity provider)"
            )
        parts = urlsplit(public_url)
        callback = f"{parts.scheme}://{parts.netloc}/oauth/callback-nextcloud"
        oauth2_signin = not self.auth_server_login_flow_signin
        if consent_provider == "login-flow-v2" and oauth2_signin and not has_oauth2_client:
            problems.append(
                "NEXTCLOUD_OAUTH2_CLIENT_ID and NEXTCLOUD_OAUTH2_CLIENT_SECRET are required with "
                "AUTH_SERVER_ENABLED=true: people sign in through Nextcloud's OAuth2 app, whose answer "
                "returns only to the browser that started (add a client under Administration settings "
                f"> Security > OAuth 2.0 clients, redirection URI {callback}). Login Flow v2 cannot "
                "sign people in safely: whoever is sent its link and signs in connects their account "
                "to the sender's client (docs/ADR/0033); AUTH_SERVER_LOGIN_FLOW_SIGNIN=true accepts "
                "that risk"
            )
        if self.auth_server_login_flow_signin and consent_provider != "login-flow-v2":
            problems.append(
                "AUTH_SERVER_LOGIN_FLOW_SIGNIN=true needs NEXTCLOUD_CONSENT_PROVIDER=login-flow-v2: "
                "it lets people sign in through Login Flow v2 instead of Nextcloud's OAuth2 app; "
                "remove it to keep the safer OAuth2 sign-in"
            )
        if not has_keys:
            problems.append(
                "TOKEN_ENCRYPTION_KEY (or TOKEN_ENCRYPTION_KEY_FILE) is required with "
                "AUTH_SERVER_ENABLED=true: signing keys and Nextcloud credentials are stored "
                "encrypted; create one with `nextcloud-mcp-bridge keys generate`"
            )
        if public_url and parts.scheme != "https" and parts.hostname not in ("localhost", "127.0.0.1", "::1"):
            problems.append(
                "MCP_PUBLIC_URL must be https with AUTH_SERVER_ENABLED=true: its origin is the token issuer"
            )
        return problems
