"""Settings: read once from the environment (and an optional `.env`), validated at start-up.

Every problem is reported as one line that names the environment variable and what it expects,
e.g. ``NEXTCLOUD_HOST must be an http(s) URL, e.g. https://cloud.example.com``.
`.env.example` documents every variable read here; a test keeps the two in step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

from nextcloud_mcp_server.config.auth_server import AuthServerSettings
from nextcloud_mcp_server.config.find import FindSettings
from nextcloud_mcp_server.config.nextcloud import NextcloudSettings
from nextcloud_mcp_server.config.replicas import ReplicaSettings
from nextcloud_mcp_server.inbound.client_address import TrustedProxies, parse_trusted_proxies

__all__ = ["ConfigError", "Settings", "load_settings"]

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
# Asymmetric signatures only: never "none", never an HMAC (a public key must not be a secret).
SAFE_ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "PS384", "PS512", "EdDSA")


class ConfigError(Exception):
    """The configuration cannot be used; `problems` holds one line per variable."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class Settings(FindSettings, ReplicaSettings, AuthServerSettings, NextcloudSettings):
    """Everything the server reads from its environment. Field name = variable name, upper-cased."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        validate_default=True,
    )

    # --- tools
    notes_max_content_bytes: int = Field(default=1024 * 1024, gt=0)
    nextcloud_mcp_permissions: Literal["read", "write", "destructive"] = "destructive"
    # which toolsets are offered: `default`, `all`, or names (`default,deck`); checked by tools/
    nextcloud_mcp_toolsets: str = "default"
    # toolsets a caller may enable for themselves beyond those (docs/ADR/0070): `auto` (all of
    # them when NEXTCLOUD_MCP_TOOLSETS names `default` or `all`, none when it names toolsets one by
    # one), `all`, `none`, or names
    nextcloud_mcp_on_demand: str = "auto"
    # how long a user's enabled Nextcloud apps are remembered (toolsets of apps, tools/_apps.py);
    # 0: not at all, every tools/list and app tool call asks Nextcloud
    nextcloud_apps_cache_seconds: float = Field(default=300.0, ge=0, le=86_400)
    # answers kept per user with Nextcloud's validator (nextcloud/kept.py): the process's budget
    nextcloud_kept_answers_mb: int = Field(default=128, ge=4, le=4096)
    confirm_destructive: bool = True
    files_max_read_bytes: int = Field(default=512 * 1024, gt=0, le=16 * 1024 * 1024)
    default_timezone: str = "UTC"
    # --- HTTP transport
    mcp_host: str = "127.0.0.1"
    mcp_port: int = Field(default=8000, ge=0, le=65535)
    mcp_allowed_hosts: str = ""
    # Limits at the HTTP front (docs/ADR/0020-limits-at-the-front.md)
    mcp_max_connections: int = Field(default=1000, ge=1, le=100_000)
    mcp_header_timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    mcp_body_timeout_seconds: float = Field(default=60.0, gt=0, le=3600)
    mcp_max_request_bytes: int = Field(default=4 * 1024 * 1024, ge=64 * 1024, le=64 * 1024 * 1024)
    mcp_max_sessions: int = Field(default=1000, ge=1, le=100_000)
    mcp_max_sessions_per_user: int = Field(default=10, ge=1, le=100_000)
    mcp_session_opens_per_minute: int = Field(default=60, ge=1, le=60_000)
    mcp_session_idle_timeout_seconds: float = Field(default=1800.0, gt=0, le=86_400)
    # reverse proxies whose X-Forwarded-For names the client (client_address.py); default: none
    forwarded_allow_ips: str = ""

    # --- OAuth resource server (multi-user); setting OIDC_ISSUER turns it on
    oidc_issuer: str | None = None
    oidc_jwks_uri: str | None = None
    oidc_introspection_endpoint: str | None = None
    oidc_client_id: str | None = None
    oidc_client_secret: SecretStr | None = None
    oidc_user_claim: str = "preferred_username"
    oidc_algorithms: str = "RS256,ES256,PS256,EdDSA"
    oidc_leeway_seconds: int = Field(default=60, ge=0, le=600)
    # Bounds on the identity provider's answers (discovery, JWKS, introspection, token endpoint).
    idp_request_deadline_seconds: float = Field(default=15.0, gt=0, le=600)
    idp_max_answer_bytes: int = Field(default=1024 * 1024, ge=16 * 1024)
    oidc_opaque_tokens: Literal["introspection", "nextcloud", "reject"] = "introspection"
    oidc_introspection_cache_seconds: float = Field(default=30.0, ge=0, le=300)
    oidc_opaque_refusals_per_minute: int = Field(default=20, ge=1, le=100_000)
    mcp_public_url: str | None = None
    mcp_resource_audiences: str = ""
    oauth_scope_style: Literal["colon", "dot"] = "colon"
    enable_offline_access: bool = False

    # --- offline access (ENABLE_OFFLINE_ACCESS=true): grants kept encrypted in SQLite (the keys,
    # the store and several replicas: config/replicas.py)
    elicitation_timeout_seconds: int = Field(default=300, ge=30, le=3600)
    consent_max_pending_per_user: int = Field(default=3, ge=1, le=100)
    login_flow_max_pollers: int = Field(default=20, ge=1, le=10_000)
    nextcloud_oidc_scopes: str = "profile email"
    nextcloud_resource: str | None = None
    nextcloud_consent_provider: Literal["oidc", "nextcloud-oauth2", "login-flow-v2"] = "oidc"
    nextcloud_oauth2_client_id: str | None = None
    nextcloud_oauth2_client_secret: SecretStr | None = None
    nextcloud_public_url: str | None = None

    # --- operations
    log_level: LogLevel = "INFO"
    health_check_cache_seconds: float = Field(default=10.0, ge=0, le=300)

    @field_validator(
        "oidc_issuer",
        "oidc_jwks_uri",
        "oidc_introspection_endpoint",
        "mcp_public_url",
        "nextcloud_public_url",
        "find_embeddings_url",
    )
    @classmethod
    def _optional_urls(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.fragment:
            raise ValueError("must be an http(s) URL")
        return value.strip()

    @model_validator(mode="after")
    def _auth_server_means_offline(self) -> Settings:
        """Tokens this server issues name a Nextcloud user, whose credential it keeps."""
        if self.auth_server_enabled:
            self.enable_offline_access = True
        return self

    @field_validator("oidc_algorithms")
    @classmethod
    def _algorithms(cls, value: str) -> str:
        chosen = [a.strip() for a in value.split(",") if a.strip()]
        unsafe = [a for a in chosen if a not in SAFE_ALGORITHMS]
        if unsafe or not chosen:
            raise ValueError(f"must be a comma-separated subset of {', '.join(SAFE_ALGORITHMS)}")
        return ",".join(chosen)

    @field_validator("default_timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value.strip())
        except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder of zones ("America")
            raise ValueError("must be an IANA time zone name, e.g. Europe/Berlin") from None
        return value.strip()

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator(
        "nextcloud_mcp_permissions", "nextcloud_mcp_toolsets", "nextcloud_mcp_on_demand", mode="before"
    )
    @classmethod
    def _lower(cls, value: Any) -> Any:
        """Typed into a form (Claude Desktop's is free text), `Read` or ` write` is that level."""
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _proxies(cls, value: str) -> str:
        parse_trusted_proxies(value)
        return value

    @field_validator("mcp_allowed_hosts")
    @classmethod
    def _hosts(cls, value: str) -> str:
        for host in filter(None, (h.strip() for h in value.split(","))):
            if "/" in host or " " in host or host.startswith(":"):
                raise ValueError("must be a comma-separated list of host names, e.g. mcp.example.com")
        return value

    # --- derived views

    @property
    def toolset_names(self) -> list[str]:
        """NEXTCLOUD_MCP_TOOLSETS as a list of names, in order, without repeats."""
        names = (name.strip() for name in self.nextcloud_mcp_toolsets.split(","))
        return list(dict.fromkeys(name for name in names if name)) or ["default"]

    @property
    def allowed_hosts(self) -> list[str]:
        """Host names (optionally with :port) that clients may use to reach the HTTP transport."""
        return [h.strip().lower() for h in self.mcp_allowed_hosts.split(",") if h.strip()]

    @property
    def trusted_proxies(self) -> TrustedProxies:
        return TrustedProxies(parse_trusted_proxies(self.forwarded_allow_ips))

    def secrets(self) -> list[str]:
        """Every secret value, so the log filter can redact it wherever it appears."""
        found = (
            self.nextcloud_password,
            self.oidc_client_secret,
            self.token_encryption_key,
            self.nextcloud_oauth2_client_secret,
        )
        values = [s.get_secret_value() for s in found if s] + self.encryption_keys()
        if self.store_url is not None:
            values += [urlsplit(self.store_url.get_secret_value()).password or ""]
        return [v for v in values if len(v) >= 4]

    @property
    def oauth_enabled(self) -> bool:
        return self.oidc_issuer is not None or self.auth_server_enabled

    @property
    def token_issuer(self) -> str | None:
        """Who issues the bearer tokens this server accepts: an IdP, or itself."""
        return self.auth_server_issuer if self.auth_server_enabled else self.oidc_issuer

    @property
    def auth_server_issuer(self) -> str:
        """This server's issuer identifier, spelt as its metadata spells it (`https://host/`)."""
        from pydantic import AnyHttpUrl

        return str(AnyHttpUrl(self.public_origin))

    @property
    def audiences(self) -> list[str]:
        """This server's own resource identifiers: a token must name one of them in `aud`."""
        extra = [a.strip() for a in self.mcp_resource_audiences.split(",") if a.strip()]
        return [a for a in [self.mcp_public_url or "", *extra] if a]

    @property
    def public_origin(self) -> str:
        """scheme://host[:port] of MCP_PUBLIC_URL, where the consent routes live."""
        parts = urlsplit(self.mcp_public_url or "")
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def algorithms(self) -> list[str]:
        return self.oidc_algorithms.split(",")

    def problems_for_oauth(self) -> list[str]:
        """What is missing before the server can run as an OAuth resource server."""
        problems = []
        if not self.nextcloud_host:
            problems.append("NEXTCLOUD_HOST is required: the URL of your Nextcloud")
        if not self.mcp_public_url:
            problems.append(
                "MCP_PUBLIC_URL is required with OIDC_ISSUER: the URL clients use for MCP, e.g. "
                "https://mcp.example.com/mcp (it is the audience tokens must carry)"
            )
        else:
            host = (urlsplit(self.mcp_public_url).hostname or "").lower()
            if host not in ("127.0.0.1", "localhost", "::1") and not any(
                h.partition(":")[0] == host for h in self.allowed_hosts
            ):
                problems.append(
                    f"MCP_ALLOWED_HOSTS must include {host}, the host of MCP_PUBLIC_URL "
                    "(requests for other hosts are refused against DNS rebinding)"
                )
        oauth2_client = bool(self.nextcloud_oauth2_client_id and self.nextcloud_oauth2_client_secret)
        problems += self.problems_for_auth_server(
            oidc_issuer=self.oidc_issuer,
            consent_provider=self.nextcloud_consent_provider,
            has_oauth2_client=oauth2_client,
            has_keys=bool(self.encryption_keys()),
            public_url=self.mcp_public_url or "",
        )
        if self.enable_offline_access:
            if not self.encryption_keys() and not self.auth_server_enabled:
                problems.append(
                    "TOKEN_ENCRYPTION_KEY (or TOKEN_ENCRYPTION_KEY_FILE) is required with "
                    "ENABLE_OFFLINE_ACCESS=true: grants are stored encrypted; create one with "
                    "`nextcloud-mcp-bridge keys generate`"
                )
            provider = self.nextcloud_consent_provider
            oidc_client = self.oidc_client_id and self.oidc_client_secret
            if provider == "oidc" and not oidc_client and not self.auth_server_enabled:
                problems.append(
                    "OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are required with ENABLE_OFFLINE_ACCESS=true "
                    "and NEXTCLOUD_CONSENT_PROVIDER=oidc: the server's own client at the identity "
                    "provider asks for the users' consent"
                )
            if provider == "nextcloud-oauth2" and not oauth2_client:
                problems.append(
                    "NEXTCLOUD_OAUTH2_CLIENT_ID and NEXTCLOUD_OAUTH2_CLIENT_SECRET are required with "
                    "NEXTCLOUD_CONSENT_PROVIDER=nextcloud-oauth2: add a client in Nextcloud under "
                    f"Administration settings > Security > OAuth 2.0 clients, with redirection URI "
                    f"{self.public_origin}/oauth/callback-nextcloud"
                )
        return problems

    @property
    def nextcloud_browser_url(self) -> str:
        """Nextcloud's address as people's browsers reach it (consent pages)."""
        return (self.nextcloud_public_url or self.nextcloud_host or "").rstrip("/")

    def problems_for_nextcloud(self) -> list[str]:
        """What is missing before the server can talk to a Nextcloud as one user."""
        problems = []
        if not self.nextcloud_host:
            problems.append(
                "NEXTCLOUD_HOST is required: the URL of your Nextcloud, e.g. https://cloud.example.com "
                "(see .env.example; no Nextcloud at hand? `make demo` starts a sandbox)"
            )
        if not self.nextcloud_username:
            problems.append("NEXTCLOUD_USERNAME is required: your Nextcloud login name")
        if not self.nextcloud_password:
            problems.append(
                "NEXTCLOUD_PASSWORD (or NEXTCLOUD_PASSWORD_FILE) is required: an app password from "
                "Nextcloud's Settings > Security > Devices & sessions"
            )
        return problems


_TYPE_PHRASES = {
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number",
    "bool_parsing": "must be true or false",
    "missing": "is required",
    "string_type": "must be text",
}


def _describe(error: Any) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if not error["loc"] and kind == "value_error" and "error" in ctx:
        return str(ctx["error"])  # a rule across variables: its message names them
    name = str(error["loc"][0]).upper() if error["loc"] else "configuration"
    if kind == "value_error" and "error" in ctx:
        phrase = str(ctx["error"])
    elif kind == "literal_error":
        phrase = f"must be one of {ctx.get('expected', '')}"
    elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        bound = next(iter(ctx.values()), "")
        words = {
            "greater_than": "greater than",
            "greater_than_equal": "at least",
            "less_than": "less than",
            "less_than_equal": "at most",
        }
        phrase = f"must be {words[kind]} {bound}"
    else:
        phrase = _TYPE_PHRASES.get(kind, str(error.get("msg", "is invalid")))
    return f"{name} {phrase}"


def load_settings(env_file: str | Path | None = ".env", **overrides: Any) -> Settings:
    """Read and validate the settings; raise `ConfigError` with one line per bad variable."""
    try:
        return Settings(_env_file=env_file, **overrides)  # type: ignore[call-arg]
    except ValidationError as exc:
        raise ConfigError([_describe(e) for e in exc.errors(include_url=False)]) from None
