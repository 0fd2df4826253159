"""The process-wide resources a running server owns, opened and closed by the app's lifespan.

The HTTP pool is created on first use, not at start-up: a client that only lists tools never pays
for TLS contexts and connection pools (cold start is measured in `bench/cold_start.py`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from types import TracebackType
from typing import TYPE_CHECKING

from nextcloud_mcp_server.auth.caller import Caller
from nextcloud_mcp_server.auth.consent_outcome import FailureNotes
from nextcloud_mcp_server.auth.credentials import CredentialResolver, PassThroughCredential, StaticCredential
from nextcloud_mcp_server.auth.provisioning import ElicitationSessions, Provisioning
from nextcloud_mcp_server.auth.scopes import ALL_SCOPES, advertised
from nextcloud_mcp_server.config import ConfigError, Settings
from nextcloud_mcp_server.diagnostics import StartupCheck
from nextcloud_mcp_server.index.service import FindService
from nextcloud_mcp_server.nextcloud.apps import AppsCache
from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers

if TYPE_CHECKING:
    from nextcloud_mcp_server.auth.consent_providers import ConsentProvider
    from nextcloud_mcp_server.auth.oidc_client import OIDCClient
    from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier
    from nextcloud_mcp_server.authz.requests import AuthorizationRequests
    from nextcloud_mcp_server.authz.service import AuthServer
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
    from nextcloud_mcp_server.outbound.client import BoundedClient
    from nextcloud_mcp_server.storage.backends import StoreBackend
    from nextcloud_mcp_server.storage.store import Grant

__all__ = ["Runtime"]

logger = logging.getLogger(__name__)


class Runtime:
    """Settings, the pooled Nextcloud HTTP client and the credential resolver."""

    def __init__(
        self,
        settings: Settings,
        *,
        credentials: CredentialResolver | None = None,
        scopes: Collection[str] | None = None,
    ) -> None:
        """`scopes`: those the offered tools declare (the composition knows the tools; the runtime
        does not import them), advertised by this server as authorization server; all of this
        server's scopes when not given."""
        self.settings = settings
        self._tool_scopes = set(scopes) if scopes is not None else set(ALL_SCOPES)
        if not settings.nextcloud_verify_tls:
            logger.warning(
                "NEXTCLOUD_VERIFY_TLS=false: Nextcloud's TLS certificate is not checked; anyone on the "
                "path can read and change every request, credentials included. Use NEXTCLOUD_CA_BUNDLE"
            )
        self._http: NextcloudHTTP | None = None
        self._idp_http: BoundedClient | None = None
        self._verifier: BearerTokenVerifier | None = None
        self._housekeeping: asyncio.Task[None] | None = None
        # single-user mode: the check's `cloud/user` is the one discovery every tool shares
        self.startup_check = StartupCheck(settings, who=None if settings.oauth_enabled else self._dav_user_id)
        self.discovery = DiscoveryCache()
        # per user, always revalidated with Nextcloud (nextcloud/kept.py)
        self.answers = KeptAnswers(max_bytes=settings.nextcloud_kept_answers_mb * 1024 * 1024)
        self.apps = AppsCache(settings.nextcloud_apps_cache_seconds)  # per user (tools/_apps.py)
        self.elicitation_sessions = ElicitationSessions()
        self.store: StoreBackend | None = None
        self.find = FindService(settings)  # the find index, opened at its first use (ADR 0071)
        self.provisioning: Provisioning | None = None
        self.consent_providers: dict[str, ConsentProvider] = {}
        self.consent_failures = FailureNotes()
        self.auth_server: AuthServer | None = None
        self.credentials = credentials or self._default_credentials(settings)
        if settings.oauth_enabled and settings.enable_offline_access and credentials is None:
            self._offline_access(settings)

    @staticmethod
    def _default_credentials(settings: Settings) -> CredentialResolver:
        if settings.oauth_enabled:
            problems = settings.problems_for_oauth()
            if problems:
                raise ConfigError(problems)
            return PassThroughCredential()
        problems = settings.problems_for_nextcloud()
        if problems:
            raise ConfigError(problems)
        username, password = settings.nextcloud_username or "", settings.nextcloud_password
        return StaticCredential(username, password.get_secret_value() if password else "")

    def _offline_access(self, settings: Settings) -> None:
        from nextcloud_mcp_server.auth.offline import OfflineCredentials
        from nextcloud_mcp_server.storage.backends import make_store
        from nextcloud_mcp_server.storage.crypto import Cipher, InvalidKey

        try:
            cipher = Cipher(settings.encryption_keys())
        except InvalidKey as exc:
            raise ConfigError([f"TOKEN_ENCRYPTION_KEY is not usable: {exc}"]) from None
        self.store = make_store(settings, cipher)
        self.store.grant_deleted.append(self.find.forget)  # a revoked grant takes its index along
        self.consent_providers = self._providers(settings)
        self.credentials = OfflineCredentials(self.store, self.consent_providers)
        self.provisioning = Provisioning(self)
        if settings.auth_server_enabled:
            from nextcloud_mcp_server.authz.service import AuthServer

            scopes = advertised(self._tool_scopes, settings.oauth_scope_style)
            self.auth_server = AuthServer(settings, self.store, cipher, scopes=scopes)
            if settings.signin_provider == "login-flow-v2":
                logger.warning(
                    "AUTH_SERVER_LOGIN_FLOW_SIGNIN=true: people sign in through Login Flow v2, whose "
                    "link works in any browser; whoever gets someone to sign in through a link they "
                    "forwarded receives tokens for that account (docs/ADR/0033)"
                )

    @property
    def authorization_requests(self) -> AuthorizationRequests:
        """The authorization requests of this server as authorization server (AUTH_SERVER_ENABLED)."""
        if self.auth_server is None:
            raise RuntimeError("AUTH_SERVER_ENABLED is not set")
        return self.auth_server.requests

    def _providers(self, settings: Settings) -> dict[str, ConsentProvider]:
        """Every provider whose configuration is present: new consents use the chosen one; grants
        from another configured one keep working."""
        from nextcloud_mcp_server.auth.consent_providers import NextcloudOAuth2Consent, OIDCConsent
        from nextcloud_mcp_server.auth.login_flow import LoginFlowConsent

        providers: dict[str, ConsentProvider] = {LoginFlowConsent.name: LoginFlowConsent(self)}
        if settings.oidc_client_id and settings.oidc_client_secret:
            providers[OIDCConsent.name] = OIDCConsent(self)
        if settings.nextcloud_oauth2_client_id and settings.nextcloud_oauth2_client_secret:
            providers[NextcloudOAuth2Consent.name] = NextcloudOAuth2Consent(self)
        return providers

    @property
    def consent_provider(self) -> ConsentProvider:
        """Where new consents go (NEXTCLOUD_CONSENT_PROVIDER)."""
        return self.consent_providers[self.settings.nextcloud_consent_provider]

    @property
    def oidc_client(self) -> OIDCClient:
        """This server's own client at the identity provider (offline access)."""
        from nextcloud_mcp_server.auth.oidc_client import OIDCClient

        verifier = self.verifier
        assert self._idp_http is not None
        return OIDCClient(self.settings, self._idp_http, verifier.metadata, verifier.jwks)

    @property
    def http(self) -> NextcloudHTTP:
        if self._http is None:
            from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP

            settings = self.settings
            self._http = NextcloudHTTP(settings.nextcloud_host or "", **settings.nextcloud_http_options())
        return self._http

    async def client_for(self, caller: Caller | None) -> NextcloudClient:
        from nextcloud_mcp_server.nextcloud.client import NextcloudClient

        credential = await self.credentials.credential_for(caller)
        return NextcloudClient(self.http, credential, cache=self.discovery, answers=self.answers)

    @property
    def verifier(self) -> BearerTokenVerifier:
        """The bearer token verifier (OAuth mode), with its own HTTP client for the IdP."""
        if self._verifier is None:
            from nextcloud_mcp_server.auth.oidc import idp_client
            from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier

            self._idp_http = idp_client(self.settings)
            self._verifier = BearerTokenVerifier(
                self.settings, self._idp_http, nextcloud_whoami=self._whoami, own=self.auth_server
            )
        return self._verifier

    async def revoke_grant(self, grant: Grant) -> bool:
        """Revoke a stored grant where it was issued; True when the issuer confirmed it."""
        provider = self.consent_providers.get(grant.provider)
        return await provider.revoke(grant) if provider is not None else False

    async def _dav_user_id(self) -> str:
        return await (await self.client_for(None)).dav_user_id()

    async def _whoami(self, token: str) -> str | None:
        """Who Nextcloud says a bearer token belongs to (for Nextcloud's own oauth2 tokens)."""
        from nextcloud_mcp_server.nextcloud.auth import BearerCredential
        from nextcloud_mcp_server.nextcloud.errors import Forbidden, Unauthorized
        from nextcloud_mcp_server.nextcloud.ocs import OCSClient

        try:
            return (await OCSClient(self.http, BearerCredential(token, "")).current_user()).id
        except (Unauthorized, Forbidden):
            return None

    async def __aenter__(self) -> Runtime:
        self.startup_check.start()
        if self.store is not None:
            await self.store.open()
            if self.auth_server is not None:
                try:
                    await self.auth_server.open()
                except BaseException:
                    await self.store.close()
                    raise
            # Another replica finished a consent that a session held here asked for.
            self.store.listen_completions(self.elicitation_sessions.complete)
            self._housekeeping = asyncio.create_task(self._tidy(), name="consent-housekeeping")
        return self

    async def _tidy(self, every: float = 60.0) -> None:
        """Expire unanswered consent requests and forget their sessions, every minute."""
        assert self.store is not None
        while True:
            await asyncio.sleep(every)
            try:
                await self.store.expire()
                if self.auth_server is not None:
                    from nextcloud_mcp_server.authz.signin import sweep_pending

                    await self.auth_server.tidy()
                    await sweep_pending(self)
            except Exception:
                logger.exception("consent housekeeping failed")
            self.elicitation_sessions.prune(time.time())

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.startup_check.aclose()
        if self._housekeeping is not None:
            self._housekeeping.cancel()
            self._housekeeping = None
        for provider in self.consent_providers.values():
            closing = getattr(provider, "aclose", None)
            if closing is not None:
                await closing()
        if self.auth_server is not None:
            await self.auth_server.aclose()
        await self.find.close()
        if self.store is not None:
            await self.store.close()
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        if self._idp_http is not None:
            await self._idp_http.aclose()
            self._idp_http = None
