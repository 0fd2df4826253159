"""Single-flight refresh under load, with a real IdP that rotates refresh tokens on every use."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from nextcloud_mcp_server.auth.caller import Caller
from nextcloud_mcp_server.auth.offline import OfflineCredentials
from nextcloud_mcp_server.config import load_settings
from nextcloud_mcp_server.runtime import Runtime
from nextcloud_mcp_server.storage.crypto import generate_key
from nextcloud_mcp_server.storage.store import Grant
from tests.nextcloud_double import Account, NextcloudDouble
from tests.nextcloud_double.server import serve_in_thread
from tests.nextcloud_double.tokens import idp_jwt_validator
from tests.oidc import IdP

pytestmark = pytest.mark.integration

USERS = [f"user{i:02}" for i in range(20)]
CALLS_PER_USER = 10


async def test_twenty_users_ten_parallel_calls_one_refresh_per_user_per_expiry(
    rotating_idp: IdP, tmp_path: Path
) -> None:
    """Round 1 mints one access token per user (and asks each user's DAV id once); once they fall
    due, round 2 refreshes exactly once more per user; no refresh token is lost (each user's
    stored token still works afterwards).

    The credentials' clock is ours to move: waiting for real expiry would make the test depend on
    how fast a loaded machine serves 200 calls before a short-lived token dies."""
    double = NextcloudDouble(tmp_path / "nc", [Account(u, f"{u}-pw") for u in USERS])
    double.accounts.add_bearer_validator(idp_jwt_validator(rotating_idp.issuer))
    redirect = "http://127.0.0.1:9/oauth/callback-nextcloud"
    client_id, secret = rotating_idp.register_confidential(redirect)
    with serve_in_thread(double, lifespan="off") as nextcloud:
        settings = load_settings(
            env_file=None,
            nextcloud_host=nextcloud,
            oidc_issuer=rotating_idp.issuer,
            mcp_public_url="http://127.0.0.1:9/mcp",
            oidc_client_id=client_id,
            oidc_client_secret=secret,
            enable_offline_access=True,
            token_encryption_key=generate_key(),
            store_path=tmp_path / "store.sqlite3",
            nextcloud_resource=nextcloud,
        )
        refresh_tokens = {
            user: rotating_idp.token(
                user=user,
                resource=nextcloud,
                scope="profile",
                client_id=client_id,
                client_secret=secret,
                redirect_uri=redirect,
                offline=True,
            )["refresh_token"]
            for user in USERS
        }
        async with Runtime(settings) as runtime:
            assert runtime.store is not None
            assert isinstance(runtime.credentials, OfflineCredentials)
            now = [time.time()]
            credentials = OfflineCredentials(runtime.store, runtime.consent_providers, clock=lambda: now[0])
            runtime.credentials = credentials
            for user, token in refresh_tokens.items():
                await runtime.store.save_grant(Grant(user, user, "oidc", "refresh_token", token))

            async def call(user: str) -> int:
                caller = Caller(subject=user, user_id=user, scopes=frozenset(), token="")
                files = await (await runtime.client_for(caller)).files()
                return len([entry async for entry in files.iter_directory("")])

            async def round_of_calls() -> None:
                async with asyncio.TaskGroup() as group:  # a failure cancels the rest cleanly
                    for user in USERS:
                        for _ in range(CALLS_PER_USER):
                            group.create_task(call(user))

            await round_of_calls()
            assert dict(credentials.refreshes) == dict.fromkeys(USERS, 1)
            # Each user's ten first calls arrived together and asked for the DAV user id once.
            asked = [r.user for r in double.requests if r.path == "/ocs/v2.php/cloud/user"]
            assert sorted(asked) == USERS

            due = [credentials.refresh_due_at(user) for user in USERS]
            assert all(at is not None and now[0] < at < now[0] + 600 for at in due)
            now[0] = max(at for at in due if at is not None)
            await round_of_calls()
            assert dict(credentials.refreshes) == dict.fromkeys(USERS, 2)

            fresh = OfflineCredentials(runtime.store, runtime.consent_providers)
            for user in USERS:  # the last rotated refresh token of every user was kept
                await runtime.store.access_tokens.drop(user)  # (not the shared access token)
                await fresh.credential_for(Caller(subject=user, user_id=user, scopes=frozenset(), token=""))
            assert dict(fresh.refreshes) == dict.fromkeys(USERS, 1)
            kept = [user for user in USERS if await runtime.store.get_grant(user) is not None]
            assert kept == USERS
