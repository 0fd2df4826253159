"""Where a user's Nextcloud credential comes from (NEXTCLOUD_CONSENT_PROVIDER).

- `oidc`: the person signs in at the identity provider; its refresh token is stored; Nextcloud
  gets the IdP's access tokens as Bearer.
- `nextcloud-oauth2`: the person grants Nextcloud's own OAuth2 app access; Nextcloud's refresh
  token is stored; Nextcloud gets its own access tokens (Bearer, Basic for the Notes API).
- `login-flow-v2`: the person grants access in Nextcloud's login pages; the app password and its
  login name are stored; Nextcloud gets Basic with the app password.

Each provider starts a consent (`begin`: the URL the browser goes to), finishes a redirect-based
one (`finish`), turns a stored grant into a credential (`mint`), revokes it where it was issued
(`revoke`) and deletes a credential minted from a grant that is dropped (`delete`). Everything
around that - elicitations, states, storage, completion, audit - is shared (`consent.py`,
`consent_outcome.py`, `offline.py`).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from nextcloud_mcp_server.auth.errors import OIDCUnavailable
from nextcloud_mcp_server.auth.oidc_client import CALLBACK_PATH, InvalidGrant, ProviderError, pkce_pair
from nextcloud_mcp_server.nextcloud.auth import BasicCredential, BearerCredential, Credential
from nextcloud_mcp_server.nextcloud.errors import NextcloudError, ServerError, Unauthorized
from nextcloud_mcp_server.storage.records import ConsentState, Elicitation, Grant

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.login import NextcloudOAuth2

__all__ = [
    "STATE_TTL",
    "ConsentFailed",
    "ConsentProvider",
    "GrantBroken",
    "GrantRefused",
    "Minted",
    "NextcloudOAuth2Consent",
    "OIDCConsent",
    "delete_at_nextcloud",
]

logger = logging.getLogger(__name__)
STATE_TTL = 600.0


@dataclass(frozen=True)
class Minted:
    """A credential made from a grant; `lifetime` None means: good until Nextcloud refuses it.
    `rotated` is the grant's new secret when the issuer replaced it (store it, or lose access)."""

    credential: Credential
    lifetime: float | None
    rotated: str | None = None


class GrantRefused(Exception):
    """The issuer no longer accepts the stored grant (revoked, expired, reused): ask again."""


class GrantBroken(Exception):
    """The issuer fails for this grant while it answers others (Nextcloud's token endpoint: a 500
    page for this refresh token, its OAuth error for a made-up one). Taken as final only when it
    lasts (`offline.py`, ADR 0064); until then `cause` is what the call meets."""

    def __init__(self, reason: str, cause: NextcloudError) -> None:
        super().__init__(reason)
        self.cause = cause


class ConsentFailed(Exception):
    """A consent could not be completed; `title` and `message` are for the person's browser,
    `reason` for the audit trail, `status` for the page."""

    def __init__(self, title: str, message: str, *, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.title, self.message, self.reason, self.status = title, message, reason, status


class ConsentProvider(Protocol):
    name: str

    async def begin(self, elicitation: Elicitation) -> str:
        """Start a consent; the URL the person's browser is sent to."""

    async def finish(self, consent: ConsentState, expected_user: str, params: Mapping[str, str]) -> Grant:
        """Finish a consent at our callback (redirect-based providers); raise `ConsentFailed`."""

    async def mint(self, grant: Grant) -> Minted:
        """A credential from a stored grant; raise `GrantRefused` when the issuer says no."""

    async def revoke(self, grant: Grant) -> bool:
        """Revoke the grant where it was issued; True when the issuer confirmed it."""

    async def delete(self, credential: Credential) -> bool | None:
        """Delete at Nextcloud a credential minted from a grant being dropped: True when deleted,
        False when it could not be (the person is told), None when it is not Nextcloud's."""


async def _redirect_state(runtime: Any, elicitation: Elicitation, nonce: str = "") -> tuple[str, str]:
    """A single-use state bound to the elicitation, and the PKCE S256 challenge of its verifier."""
    verifier, challenge = pkce_pair()
    state = await runtime.store.create_state(elicitation.id, elicitation.subject, verifier, nonce, STATE_TTL)
    return state, challenge


def _callback_url(runtime: Any) -> str:
    return f"{runtime.settings.public_origin}{CALLBACK_PATH}"


def _wrong_account(expected: str, got: str) -> ConsentFailed:
    return ConsentFailed(
        "Signed in as someone else",
        f"You granted access as {got}, but your assistant acts for {expected}, so nothing was "
        "connected. Sign out of Nextcloud first.",
        reason=f"consent came from Nextcloud user {got}, expected {expected}",
        status=403,
    )


class OIDCConsent:
    """The identity provider hands out the refresh token; Nextcloud accepts its access tokens."""

    name = "oidc"

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime

    async def begin(self, elicitation: Elicitation) -> str:
        nonce = secrets.token_urlsafe(16)
        state, challenge = await _redirect_state(self._runtime, elicitation, nonce)
        return str(
            await self._runtime.oidc_client.authorization_url(
                state=state, challenge=challenge, nonce=nonce, login_hint=elicitation.subject
            )
        )

    async def finish(self, consent: ConsentState, expected_user: str, params: Mapping[str, str]) -> Grant:
        client = self._runtime.oidc_client
        try:
            tokens = await client.exchange_code(params.get("code", ""), consent.verifier)
            claims = await client.id_token_claims(tokens.id_token or "", consent.nonce)
        except (ProviderError, InvalidGrant, OIDCUnavailable) as exc:
            raise ConsentFailed(
                "Sign-in failed",
                f"The sign-in could not be completed ({exc}).",
                reason=f"sign-in failed: {exc}",
            ) from None
        if claims.get("sub") != consent.subject:
            raise ConsentFailed(
                "Signed in as someone else",
                "You signed in with a different account than the one your assistant uses, so nothing "
                "was connected. Sign out of the identity provider first.",
                reason="signed in as a different account",
                status=403,
            )
        if not tokens.refresh_token:
            raise ConsentFailed(
                "Offline access was not granted",
                "The sign-in service did not allow offline access (no refresh token). Ask your "
                "administrator to allow the offline_access scope for this server's client.",
                reason="no refresh token was issued",
            )
        user_id = str(claims.get(self._runtime.settings.oidc_user_claim) or consent.subject)
        return Grant(consent.subject, user_id, self.name, "refresh_token", tokens.refresh_token, tokens.scope)

    async def mint(self, grant: Grant) -> Minted:
        try:
            tokens = await self._runtime.oidc_client.refresh(grant.secret)
        except InvalidGrant as exc:
            raise GrantRefused(f"the identity provider refused the refresh token ({exc})") from None
        credential = BearerCredential(tokens.access_token, grant.user_id)
        return Minted(credential, tokens.expires_in, tokens.refresh_token)

    async def revoke(self, grant: Grant) -> bool:
        try:
            return bool(await self._runtime.oidc_client.revoke(grant.secret))
        except OIDCUnavailable as exc:
            logger.warning("revocation at the identity provider failed: %s", exc)
            return False

    async def delete(self, credential: Credential) -> bool | None:
        """The identity provider's access token is not Nextcloud's to delete (revoke ends the grant)."""
        return None


class NextcloudOAuth2Consent:
    """Nextcloud's own OAuth2 app hands out the tokens; no identity provider reaches Nextcloud."""

    name = "nextcloud-oauth2"

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime
        self._oauth2: NextcloudOAuth2 | None = None

    @property
    def client(self) -> NextcloudOAuth2:
        """This server's client at Nextcloud's OAuth2 app (the sign-in of AUTH_SERVER_ENABLED too)."""
        return self._client

    @property
    def callback_url(self) -> str:
        """The one redirect URI of that client: progressive consent and sign-in share it."""
        return _callback_url(self._runtime)

    @property
    def _client(self) -> NextcloudOAuth2:
        """Made on first use: the HTTP pool (and httpx) load only when a consent needs them."""
        if self._oauth2 is None:
            from nextcloud_mcp_server.nextcloud.login import NextcloudOAuth2

            settings = self._runtime.settings
            secret = settings.nextcloud_oauth2_client_secret
            self._oauth2 = NextcloudOAuth2(
                self._runtime.http,
                settings.nextcloud_oauth2_client_id or "",
                secret.get_secret_value() if secret else "",
                settings.nextcloud_browser_url,
            )
        return self._oauth2

    async def begin(self, elicitation: Elicitation) -> str:
        state, challenge = await _redirect_state(self._runtime, elicitation)
        return self._client.authorization_url(
            redirect_uri=_callback_url(self._runtime), state=state, challenge=challenge
        )

    async def finish(self, consent: ConsentState, expected_user: str, params: Mapping[str, str]) -> Grant:
        from nextcloud_mcp_server.nextcloud.login import OAuth2Refused

        try:
            tokens = await self._client.exchange_code(
                params.get("code", ""), consent.verifier, _callback_url(self._runtime)
            )
        except (OAuth2Refused, NextcloudError) as exc:
            raise ConsentFailed(
                "Nextcloud did not grant access",
                f"The authorization could not be completed ({exc}).",
                reason=f"Nextcloud token exchange failed: {exc}",
            ) from None
        bearer = BearerCredential(tokens.access_token, tokens.user_id)
        if expected_user and tokens.user_id != expected_user:
            await delete_at_nextcloud(self._runtime, bearer)
            raise _wrong_account(expected_user, tokens.user_id)
        try:
            login = await self._basic_login(bearer)
        except NextcloudError as exc:
            raise ConsentFailed(
                "Nextcloud is unavailable",
                "Nextcloud could not confirm the new access. Try again in a minute.",
                reason=f"checking the new Nextcloud token failed: {exc}",
                status=502,
            ) from None
        if login is None:
            await delete_at_nextcloud(self._runtime, bearer)
            raise ConsentFailed(
                "Sign in with your user name",
                f"Nextcloud gave access for the name you signed in with, which is not exactly your "
                f"user name {tokens.user_id}, and would refuse that access to Notes, so nothing was "
                f"connected. Sign out of Nextcloud first, then sign in as {tokens.user_id}.",
                reason=f"signed in to Nextcloud with a login name other than the user id {tokens.user_id}",
                status=403,
            )
        kept = "" if login == tokens.user_id else login
        return Grant(
            consent.subject, tokens.user_id, self.name, "refresh_token", tokens.refresh_token, login=kept
        )

    async def discard(self, consent: ConsentState, params: Mapping[str, str]) -> tuple[str, bool] | None:
        """Redeem a code that must not be used - Nextcloud's answer reached another browser than
        the one that started - and delete its access at once: Nextcloud made an app token when the
        person granted access, which would otherwise stay in their devices list. The user it named
        and whether Nextcloud deleted it; None when the code could not be redeemed."""
        from nextcloud_mcp_server.nextcloud.login import OAuth2Refused

        if not params.get("code"):
            return None
        try:
            tokens = await self._client.exchange_code(
                params["code"], consent.verifier, _callback_url(self._runtime)
            )
        except (OAuth2Refused, NextcloudError) as exc:
            logger.warning("an OAuth2 code answered in another browser could not be redeemed: %s", exc)
            return None
        bearer = BearerCredential(tokens.access_token, tokens.user_id)
        return tokens.user_id, await delete_at_nextcloud(self._runtime, bearer)

    async def _basic_login(self, bearer: BearerCredential) -> str | None:
        """The name Nextcloud takes the token with as a Basic password, as the Notes API (refusing
        Bearer) needs, or None. Nextcloud compares it with the login name the person typed at
        sign-in: the user id, or their e-mail address (a login by e-mail, as LDAP and SSO set-ups
        allow); another name ("ADMIN" for admin, an LDAP login name) this server cannot learn."""
        from nextcloud_mcp_server.nextcloud.ocs import OCSClient

        user = await OCSClient(self._runtime.http, bearer).current_user()
        for login in dict.fromkeys(n for n in (bearer.username, user.email) if n):
            try:
                await OCSClient(self._runtime.http, BasicCredential(login, bearer.token)).current_user()
            except Unauthorized:
                continue
            return login
        return None

    async def mint(self, grant: Grant) -> Minted:
        from nextcloud_mcp_server.nextcloud.login import OAuth2Refused

        try:
            tokens = await self._client.refresh(grant.secret)
        except ServerError as exc:
            if await self._client.answers_unknown_tokens():
                raise GrantBroken(
                    f"Nextcloud's token endpoint failed for this grant (HTTP {exc.status}) while it "
                    "answered others",
                    exc,
                ) from None
            raise
        except OAuth2Refused as exc:
            if exc.token_rejected:
                raise GrantRefused(f"Nextcloud refused the refresh token ({exc.error})") from None
            raise NextcloudError(
                self._runtime.http.host,
                f"Nextcloud refused this server's OAuth2 client ({exc.error}); an administrator should "
                "check NEXTCLOUD_OAUTH2_CLIENT_ID and NEXTCLOUD_OAUTH2_CLIENT_SECRET",
            ) from None
        credential = BearerCredential(
            tokens.access_token, tokens.user_id, basic_for_notes=True, login=grant.login
        )
        return Minted(credential, tokens.expires_in, tokens.refresh_token)

    async def revoke(self, grant: Grant) -> bool:
        """Nextcloud has no revocation endpoint for OAuth2 tokens; the access token is an app
        token, though, and deleting it ends the grant."""
        try:
            minted = await self.mint(grant)
        except (GrantRefused, NextcloudError) as exc:
            logger.warning("revocation at Nextcloud failed: %s", exc)
            return False
        return await delete_at_nextcloud(self._runtime, minted.credential)

    async def delete(self, credential: Credential) -> bool | None:
        """The access token is an app token: deleting it removes the grant from the person's
        devices (while it is still valid; an expired one is refused and stays listed)."""
        return await delete_at_nextcloud(self._runtime, credential)


async def delete_at_nextcloud(runtime: Any, credential: Credential) -> bool:
    """Delete the app password (or OAuth2 token) `credential` uses; True when Nextcloud did."""
    from nextcloud_mcp_server.nextcloud.ocs import OCSClient

    try:
        await OCSClient(runtime.http, credential).delete_app_password()
    except NextcloudError as exc:
        logger.warning("deleting the credential at Nextcloud failed: %s", exc)
        return False
    return True
