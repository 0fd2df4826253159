"""The process-wide resources a running server owns, opened and closed by the app's lifespan.

`Runtime` composes them; each piece is its own module (docs/ADR/0069):

- `connection`: Nextcloud: the pooled HTTP client, discovery once per user, kept answers, apps,
  the check of Nextcloud;
- `identity`: the identity provider (OAuth mode): token verifier, this server's own client;
- `offline`: offline access: the store of grants, the authorization server, housekeeping;
- here: credentials and consent (who a call acts as, where consents go), and the find index.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from types import TracebackType
from typing import TYPE_CHECKING

from nextcloud_mcp_server.auth.caller import Caller
from nextcloud_mcp_server.auth.consent_outcome import FailureNotes
from nextcloud_mcp_server.auth.credentials import CredentialResolver, PassThroughCredential, StaticCredential
from nextcloud_mcp_server.auth.provisioning import ElicitationSessions, Provisioning
from nextcloud_mcp_server.auth.scopes import ALL_SCOPES
from nextcloud_mcp_server.config import ConfigError, Settings
from nextcloud_mcp_server.index.service import FindService
from nextcloud_mcp_server.runtime.connection import NextcloudConnection
from nextcloud_mcp_server.runtime.find_sync import background_sync
from nextcloud_mcp_server.runtime.identity import IdentityProvider
from nextcloud_mcp_server.runtime.offline import OfflineStore

if TYPE_CHECKING:
    from nextcloud_mcp_server.auth.consent_providers import ConsentProvider
    from nextcloud_mcp_server.auth.oidc_client import OIDCClient
    from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier
    from nextcloud_mcp_server.authz.requests import AuthorizationRequests
    from nextcloud_mcp_server.authz.service import AuthServer
    from nextcloud_mcp_server.diagnostics import StartupCheck
    from nextcloud_mcp_server.index.background import BackgroundSync
    from nextcloud_mcp_server.nextcloud.apps import AppsCache
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient
    from nextcloud_mcp_server.nextcloud.discovery import DiscoveryCache
    from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
    from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
    from nextcloud_mcp_server.storage.backends import StoreBackend
    from nextcloud_mcp_server.storage.store import Grant

__all__ = ["Runtime"]

logger = logging.getLogger(__name__)


class Runtime:
    """Settings, Nextcloud, the identity provider, offline access, and the credential resolver."""

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
        # single-user mode: the check's `cloud/user` is the one discovery every tool shares
        who = None if settings.oauth_enabled else self._dav_user_id
        self.nextcloud = NextcloudConnection(settings, who=who)
        self.identity = IdentityProvider(
            settings, nextcloud_whoami=self.nextcloud.whoami, own=lambda: self.auth_server
        )
        self.elicitation_sessions = ElicitationSessions()
        self.offline: OfflineStore | None = None
        self.find = FindService(settings)  # the find index, opened at its first use (ADR 0071)
        self.find_sync: BackgroundSync | None = None  # kept current between calls (ADR 0084)
        self.provisioning: Provisioning | None = None
        self.consent_providers: dict[str, ConsentProvider] = {}
        self.consent_failures = FailureNotes()
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

        self.offline = OfflineStore(settings, self._tool_scopes, self.find.forget)
        self.consent_providers = self._providers(settings)
        self.credentials = OfflineCredentials(self.offline.store, self.consent_providers)
        self.provisioning = Provisioning(self)

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

    # --- what the pieces hold, under the names the rest of the server uses

    @property
    def http(self) -> NextcloudHTTP:
        return self.nextcloud.http

    @property
    def discovery(self) -> DiscoveryCache:
        return self.nextcloud.discovery

    @property
    def answers(self) -> KeptAnswers:
        return self.nextcloud.answers

    @property
    def apps(self) -> AppsCache:
        return self.nextcloud.apps

    @property
    def startup_check(self) -> StartupCheck:
        return self.nextcloud.startup_check

    @property
    def verifier(self) -> BearerTokenVerifier:
        """The bearer token verifier (OAuth mode), with its own HTTP client for the IdP."""
        return self.identity.verifier

    @property
    def oidc_client(self) -> OIDCClient:
        """This server's own client at the identity provider (offline access)."""
        return self.identity.oidc_client

    @property
    def store(self) -> StoreBackend | None:
        return self.offline.store if self.offline is not None else None

    @property
    def auth_server(self) -> AuthServer | None:
        return self.offline.auth_server if self.offline is not None else None

    @property
    def authorization_requests(self) -> AuthorizationRequests:
        """The authorization requests of this server as authorization server (AUTH_SERVER_ENABLED)."""
        if self.auth_server is None:
            raise RuntimeError("AUTH_SERVER_ENABLED is not set")
        return self.auth_server.requests

    @property
    def consent_provider(self) -> ConsentProvider:
        """Where new consents go (NEXTCLOUD_CONSENT_PROVIDER)."""
        return self.consent_providers[self.settings.nextcloud_consent_provider]

    async def client_for(self, caller: Caller | None) -> NextcloudClient:
        return self.nextcloud.client(await self.credentials.credential_for(caller))

    async def _dav_user_id(self) -> str:
        return await (await self.client_for(None)).dav_user_id()

    async def revoke_grant(self, grant: Grant) -> bool:
        """Revoke a stored grant where it was issued; True when the issuer confirmed it."""
        provider = self.consent_providers.get(grant.provider)
        return await provider.revoke(grant) if provider is not None else False

    async def _sweep(self) -> int:
        from nextcloud_mcp_server.authz.signin import sweep_pending

        return await sweep_pending(self)

    async def __aenter__(self) -> Runtime:
        self.nextcloud.startup_check.start()
        if self.offline is not None:
            await self.offline.open(self.elicitation_sessions, self._sweep)
        self.find_sync = background_sync(self.settings, self.find, self.store, self.client_for)
        if self.find_sync is not None:
            self.find_sync.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.nextcloud.startup_check.aclose()
        if self.offline is not None:
            self.offline.stop_housekeeping()
        for provider in self.consent_providers.values():
            closing = getattr(provider, "aclose", None)
            if closing is not None:
                await closing()
        if self.find_sync is not None:
            await self.find_sync.stop()
        await self.find.close()
        if self.offline is not None:
            await self.offline.aclose()
        await self.nextcloud.aclose()
        await self.identity.aclose()
