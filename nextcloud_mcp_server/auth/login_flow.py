"""Consent through Nextcloud's Login Flow v2: the person grants an app password in Nextcloud's own
pages, and this server collects it by polling.

The consent link leads (once) to Nextcloud's login page. A background task polls until Nextcloud
hands out the app password, the flow's 20 minutes or the elicitation's time run out, or the
elicitation ends otherwise; it stops at the first answer. The app password is checked to belong to
the Nextcloud user the MCP caller maps to (OCS `cloud/user`) - if not, it is deleted at Nextcloud
again - and stored encrypted with its login name. The last page the person sees is Nextcloud's, so
a failure is told through the MCP session instead: it is notified, and the next consent request
says what went wrong.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from nextcloud_mcp_server.auth.consent_outcome import complete_consent, fail_consent
from nextcloud_mcp_server.auth.consent_providers import ConsentFailed, Minted, delete_at_nextcloud
from nextcloud_mcp_server.nextcloud.auth import BasicCredential, Credential
from nextcloud_mcp_server.nextcloud.errors import NextcloudError
from nextcloud_mcp_server.storage.records import ConsentState, Elicitation, Grant

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.login import LoginFlow, LoginFlowV2

__all__ = ["FLOW_LIFETIME", "LoginFlowConsent"]

logger = logging.getLogger(__name__)
FLOW_LIFETIME = 20 * 60.0  # Nextcloud forgets a flow after 20 minutes


class LoginFlowConsent:
    name = "login-flow-v2"
    poll_every = 1.0

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def _flows(self) -> LoginFlowV2:
        from nextcloud_mcp_server.nextcloud.login import LoginFlowV2

        return LoginFlowV2(self._runtime.http, self._runtime.settings.nextcloud_public_url)

    @property
    def waiting(self) -> int:
        """Flows being polled right now."""
        return len(self._tasks)

    async def begin(self, elicitation: Elicitation) -> str:
        flow = await self.start()
        store = self._runtime.store

        async def wanted() -> bool:
            current = await store.get_elicitation(elicitation.id)
            return current is not None and current.status == "pending"

        async def timed_out() -> None:
            await fail_consent(
                self._runtime,
                elicitation.id,
                elicitation.subject,
                "the Nextcloud sign-in was not completed in time",
            )

        async def granted(login: str, password: str) -> None:
            await self._granted(elicitation, login, password)

        deadline = min(elicitation.expires_at, time.time() + FLOW_LIFETIME)
        self.watch(flow, deadline, f"login-flow-{elicitation.id[:8]}", granted, wanted, timed_out)
        return flow.login_url

    async def start(self) -> LoginFlow:
        """A new flow, within LOGIN_FLOW_MAX_POLLERS; raise `ConsentFailed` when none can start."""
        limit = self._runtime.settings.login_flow_max_pollers
        if len(self._tasks) >= limit:
            # Every flow is polled about once a second: the cap bounds the load on Nextcloud.
            logger.warning("refused a Login Flow v2 sign-in: %d are being polled", limit)
            raise ConsentFailed(
                "Too many sign-ins at once",
                "Many people are signing in right now. Try again in a minute.",
                reason=f"{limit} Login Flow v2 sign-ins under way (LOGIN_FLOW_MAX_POLLERS)",
                status=503,
            )
        host = urlsplit(self._runtime.settings.mcp_public_url or "").hostname or "MCP"
        try:
            return await self._flows.start(user_agent=f"Nextcloud MCP server ({host})")
        except NextcloudError as exc:
            raise ConsentFailed(
                "Nextcloud is unavailable",
                "Nextcloud could not start the sign-in. Try again in a minute.",
                reason=f"Login Flow v2 could not start: {exc}",
                status=502,
            ) from None

    def watch(
        self,
        flow: LoginFlow,
        deadline: float,
        name: str,
        granted: Callable[[str, str], Awaitable[None]],
        wanted: Callable[[], Awaitable[bool]],
        timed_out: Callable[[], Awaitable[None]],
    ) -> None:
        """Poll `flow` in the background until Nextcloud hands out the app password (`granted`
        with login name and password), nobody wants it any more, or `deadline` (`timed_out`)."""
        task = asyncio.create_task(self._wait(flow, deadline, granted, wanted, timed_out), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _wait(
        self,
        flow: LoginFlow,
        deadline: float,
        granted: Callable[[str, str], Awaitable[None]],
        wanted: Callable[[], Awaitable[bool]],
        timed_out: Callable[[], Awaitable[None]],
    ) -> None:
        try:
            while time.time() < deadline:
                try:
                    password = await self._flows.poll(flow)
                except NextcloudError as exc:
                    logger.info("Login Flow v2 poll failed (%s); trying again", exc)
                    password = None
                if password is not None:
                    await granted(password.login_name, password.password)
                    return
                if not await wanted():
                    return
                await asyncio.sleep(self.poll_every)
            await timed_out()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("a Login Flow v2 sign-in failed")

    async def _granted(self, elicitation: Elicitation, login: str, password: str) -> None:
        from nextcloud_mcp_server.nextcloud.ocs import OCSClient

        credential = BasicCredential(login, password)
        try:
            user = await OCSClient(self._runtime.http, credential).current_user()
        except NextcloudError as exc:
            await fail_consent(
                self._runtime,
                elicitation.id,
                elicitation.subject,
                f"the new app password did not work: {exc}",
                tell=True,
            )
            return
        if elicitation.user_id and user.id != elicitation.user_id:
            await delete_at_nextcloud(self._runtime, credential)
            # The browser stays signed in to Nextcloud as that user: without this hint, the next
            # link would go straight to granting as them again.
            reason = (
                f"consent came from Nextcloud user {user.id}, expected {elicitation.user_id}; "
                f"sign out of Nextcloud in your browser first, then sign in as {elicitation.user_id}"
            )
            await fail_consent(self._runtime, elicitation.id, elicitation.subject, reason, tell=True)
            return
        grant = Grant(elicitation.subject, user.id, self.name, "app_password", password, login=login)
        await complete_consent(self._runtime, elicitation.id, grant)

    async def finish(self, consent: ConsentState, expected_user: str, params: Mapping[str, str]) -> Grant:
        raise ConsentFailed(
            "Nothing to complete here",
            "This server signs you in through Nextcloud's own pages; this address is not part of it.",
            reason="a callback arrived while Login Flow v2 is the consent provider",
        )

    async def mint(self, grant: Grant) -> Minted:
        return Minted(BasicCredential(grant.login or grant.user_id, grant.secret, uid=grant.user_id), None)

    async def revoke(self, grant: Grant) -> bool:
        return await delete_at_nextcloud(self._runtime, (await self.mint(grant)).credential)

    async def delete(self, credential: Credential) -> bool | None:
        return await delete_at_nextcloud(self._runtime, credential)

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
