"""A revoked opaque token is refused within OIDC_INTROSPECTION_CACHE_SECONDS (issue 13: it stayed
valid for a fixed 300 s)."""

from __future__ import annotations

import time
from contextlib import aclosing

from nextcloud_mcp_server.auth.oidc import idp_client
from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier
from tests import http_mock
from tests.auth.test_verifier import ISSUER, JWK, RESOURCE, mock_idp, settings


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _idp_that_revokes() -> dict[str, bool]:
    """Introspection answers `active` while the returned flag says so (revoked: set it False)."""
    state = {"active": True}
    http_mock.post(f"{ISSUER}/introspect").mock(
        side_effect=lambda request: http_mock.Response(
            200,
            json={"active": True, "sub": "alice", "aud": RESOURCE, "exp": int(time.time()) + 3600}
            if state["active"]
            else {"active": False},
        )
    )
    return state


@http_mock.mock
async def test_a_revoked_opaque_token_is_refused_after_the_configured_cache_time() -> None:
    mock_idp([JWK])
    token = _idp_that_revokes()
    clock = Clock()
    async with aclosing(idp_client(settings())) as http:
        verifier = BearerTokenVerifier(settings(), http, clock=clock)
        assert await verifier.verify_token("opaque") is not None
        token["active"] = False  # revoked at the issuer
        clock.now += 31  # past the default of 30 s
        assert await verifier.verify_token("opaque") is None


@http_mock.mock
async def test_with_no_cache_every_request_is_introspected() -> None:
    mock_idp([JWK])
    token = _idp_that_revokes()
    async with aclosing(idp_client(settings())) as http:
        verifier = BearerTokenVerifier(settings(oidc_introspection_cache_seconds=0), http)
        assert await verifier.verify_token("opaque") is not None
        token["active"] = False
        assert await verifier.verify_token("opaque") is None


def test_the_default_cache_is_short() -> None:
    assert settings().oidc_introspection_cache_seconds <= 30
