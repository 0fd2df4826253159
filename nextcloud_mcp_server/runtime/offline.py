"""Offline access (OAuth mode): the encrypted store of grants, this server as authorization
server when enabled, and the housekeeping that runs on them while the server is up."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from nextcloud_mcp_server.auth.provisioning import ElicitationSessions
from nextcloud_mcp_server.auth.scopes import advertised
from nextcloud_mcp_server.config import ConfigError, Settings

if TYPE_CHECKING:
    from nextcloud_mcp_server.authz.service import AuthServer
    from nextcloud_mcp_server.storage.backends import StoreBackend

__all__ = ["OfflineStore"]

logger = logging.getLogger(__name__)


class OfflineStore:
    """The store and what lives on it, opened and closed with the server."""

    def __init__(self, settings: Settings, tool_scopes: set[str], forget_index: Callable[[str], Any]) -> None:
        """`forget_index`: a revoked grant takes the user's find index along."""
        from nextcloud_mcp_server.storage.backends import make_store
        from nextcloud_mcp_server.storage.crypto import Cipher, InvalidKey

        try:
            cipher = Cipher(settings.encryption_keys())
        except InvalidKey as exc:
            raise ConfigError([f"TOKEN_ENCRYPTION_KEY is not usable: {exc}"]) from None
        self.store: StoreBackend = make_store(settings, cipher)
        self.store.grant_deleted.append(forget_index)
        self.auth_server: AuthServer | None = None
        self._housekeeping: asyncio.Task[None] | None = None
        if settings.auth_server_enabled:
            from nextcloud_mcp_server.authz.service import AuthServer

            scopes = advertised(tool_scopes, settings.oauth_scope_style)
            self.auth_server = AuthServer(settings, self.store, cipher, scopes=scopes)
            if settings.signin_provider == "login-flow-v2":
                logger.warning(
                    "AUTH_SERVER_LOGIN_FLOW_SIGNIN=true: people sign in through Login Flow v2, whose "
                    "link works in any browser; whoever gets someone to sign in through a link they "
                    "forwarded receives tokens for that account (docs/ADR/0033)"
                )

    async def open(self, sessions: ElicitationSessions, sweep: Callable[[], Awaitable[int]]) -> None:
        """Open the store (and the authorization server), then tidy every minute; `sweep`
        deletes the credentials of sign-ins that can no longer be answered."""
        await self.store.open()
        if self.auth_server is not None:
            try:
                await self.auth_server.open()
            except BaseException:
                await self.store.close()
                raise
        # Another replica finished a consent that a session held here asked for.
        self.store.listen_completions(sessions.complete)
        self._housekeeping = asyncio.create_task(self._tidy(sessions, sweep), name="consent-housekeeping")

    async def _tidy(
        self, sessions: ElicitationSessions, sweep: Callable[[], Awaitable[int]], every: float = 60.0
    ) -> None:
        """Expire unanswered consent requests and forget their sessions, every minute."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.store.expire()
                if self.auth_server is not None:
                    await self.auth_server.tidy()
                    await sweep()
            except Exception:
                logger.exception("consent housekeeping failed")
            sessions.prune(time.time())

    def stop_housekeeping(self) -> None:
        if self._housekeeping is not None:
            self._housekeeping.cancel()
            self._housekeeping = None

    async def aclose(self) -> None:
        """After the consent providers closed: the authorization server, then the store."""
        if self.auth_server is not None:
            await self.auth_server.aclose()
        await self.store.close()
