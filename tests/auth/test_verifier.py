"""Unit tests of the verifier's caching and rate limits (http_mock fakes the identity provider)."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from nextcloud_mcp_server.auth.oidc import idp_client
from nextcloud_mcp_server.auth.verifier import BearerTokenVerifier
from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.outbound.client import BoundedClient
from tests import http_mock

ISSUER = "https://idp.example"
RESOURCE = "https://mcp.example/mcp"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
JWK = {
    **jwt.algorithms.RSAAlgorithm.to_jwk(KEY.public_key(), as_dict=True),
    "kid": "k1",
    "alg": "RS256",
    "use": "sig",
}


def settings(**changes: Any) -> Settings:
    base = {
        "nextcloud_host": "https://cloud.example",
        "oidc_issuer": ISSUER,
        "mcp_public_url": RESOURCE,
        "oidc_client_id": "rs",
        "oidc_client_secret": "rs-secret",
    }
    return load_settings(env_file=None, **{**base, **changes})


def token(kid: str = "k1", key: Any = KEY, **claims: Any) -> str:
    now = int(time.time())
    payload = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": RESOURCE,
        "exp": now + 300,
        "iat": now,
        "scope": "notes:read",
    }
    return jwt.encode({**payload, **claims}, key, algorithm="RS256", headers={"kid": kid})


def mock_idp(jwks: list[dict[str, Any]]) -> http_mock.Route:
    http_mock.get(f"{ISSUER}/.well-known/openid-configuration").mock(
        return_value=http_mock.Response(
            200,
            json={
                "issuer": ISSUER,
                "jwks_uri": f"{ISSUER}/jwks",
                "introspection_endpoint": f"{ISSUER}/introspect",
            },
        )
    )
    return http_mock.get(f"{ISSUER}/jwks").mock(return_value=http_mock.Response(200, json={"keys": jwks}))


@pytest.fixture
async def http() -> BoundedClient:
    client = idp_client(settings())
    yield client  # type: ignore[misc]
    await client.aclose()


@http_mock.mock
async def test_unknown_kids_cause_at_most_one_refetch_per_interval(http: BoundedClient) -> None:
    """Forged tokens with unknown kids cannot make us hammer the IdP: within the interval after a
    fetch nothing is refetched; after it, one refetch, then quiet again."""
    jwks = mock_idp([JWK])
    clock = [1000.0]
    verifier = BearerTokenVerifier(settings(), http, jwks_refetch_interval=60, clock=lambda: clock[0])
    assert await verifier.verify_token(token()) is not None
    forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    for i in range(50):
        assert await verifier.verify_token(token(kid=f"forged-{i}", key=forger)) is None
    assert jwks.call_count == 1
    clock[0] += 61
    for i in range(50):
        assert await verifier.verify_token(token(kid=f"later-{i}", key=forger)) is None
    assert jwks.call_count == 2
    assert await verifier.verify_token(token()) is not None  # the known key still works from cache
    assert jwks.call_count == 2


@http_mock.mock
async def test_a_rotated_key_is_picked_up_after_the_interval(http: BoundedClient) -> None:
    """A new signing key published by the IdP is found by the refetch an unknown kid allows."""
    new_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    new_jwk = {
        **jwt.algorithms.RSAAlgorithm.to_jwk(new_key.public_key(), as_dict=True),
        "kid": "k2",
        "alg": "RS256",
    }
    jwks = mock_idp([JWK])
    clock = [1000.0]
    verifier = BearerTokenVerifier(settings(), http, jwks_refetch_interval=60, clock=lambda: clock[0])
    assert await verifier.verify_token(token()) is not None
    jwks.mock(return_value=http_mock.Response(200, json={"keys": [JWK, new_jwk]}))
    assert await verifier.verify_token(token(kid="k2", key=new_key)) is None  # too soon to refetch
    clock[0] += 61
    assert await verifier.verify_token(token(kid="k2", key=new_key)) is not None


@http_mock.mock
async def test_a_key_of_the_wrong_type_for_the_algorithm_is_not_used(http: BoundedClient) -> None:
    """An EC key published under the kid of an RS256 token does not verify it."""
    ec_key = ec.generate_private_key(ec.SECP256R1())
    ec_jwk = {**jwt.algorithms.ECAlgorithm.to_jwk(ec_key.public_key(), as_dict=True), "kid": "k1"}
    mock_idp([ec_jwk])
    verifier = BearerTokenVerifier(settings(), http)
    assert await verifier.verify_token(token()) is None


@http_mock.mock
async def test_introspection_results_are_cached_until_expiry_and_refusals_briefly(
    http: BoundedClient,
) -> None:
    mock_idp([JWK])
    now = int(time.time())
    introspect = http_mock.post(f"{ISSUER}/introspect").mock(
        side_effect=lambda request: http_mock.Response(
            200,
            json={"active": True, "sub": "alice", "aud": RESOURCE, "exp": now + 120, "scope": "notes:read"}
            if b"token=good" in request.content
            else {"active": False},
        )
    )
    verifier = BearerTokenVerifier(settings(), http)
    first = await verifier.verify_token("good")
    second = await verifier.verify_token("good")
    assert first is not None
    assert second is not None
    assert first.scopes == ["notes:read"]
    assert await verifier.verify_token("bad") is None
    assert await verifier.verify_token("bad") is None
    assert introspect.call_count == 2  # one for each distinct token
    sent = introspect.calls[0].request
    assert sent.headers["authorization"].startswith("Basic ")  # client authentication


@http_mock.mock
async def test_introspection_for_another_audience_is_refused(http: BoundedClient) -> None:
    mock_idp([JWK])
    http_mock.post(f"{ISSUER}/introspect").mock(
        return_value=http_mock.Response(
            200, json={"active": True, "sub": "alice", "aud": "https://other.example"}
        )
    )
    assert await BearerTokenVerifier(settings(), http).verify_token("opaque") is None


@http_mock.mock
async def test_metadata_for_another_issuer_is_not_trusted(http: BoundedClient) -> None:
    """RFC 8414 §3.3: a discovery document naming another issuer is refused (no mix-up)."""
    http_mock.get(f"{ISSUER}/.well-known/openid-configuration").mock(
        return_value=http_mock.Response(
            200, json={"issuer": "https://evil.example", "jwks_uri": f"{ISSUER}/jwks"}
        )
    )
    assert await BearerTokenVerifier(settings(), http).verify_token(token()) is None


def test_unsafe_algorithms_cannot_be_configured() -> None:
    from nextcloud_mcp_server.config import ConfigError

    for unsafe in ("none", "HS256", "RS256,HS512"):
        with pytest.raises(ConfigError, match="OIDC_ALGORITHMS must be a comma-separated subset"):
            settings(oidc_algorithms=unsafe)


@pytest.mark.parametrize(
    "exp",
    [
        float("nan"),
        float("inf"),
        "soon",
        pytest.param([1], id="list"),
        pytest.param(10**400, id="400-digits"),
    ],
)
@http_mock.mock
async def test_an_introspected_time_that_is_no_number_refuses_the_token(
    http: BoundedClient, exp: Any
) -> None:
    """Each raised from the verifier before, a 500 for the caller: NaN passed the expiry check
    and then `int()` refused it, as it refused Infinity; `float()` refused the others."""
    mock_idp([JWK])
    answer = {"active": True, "sub": "alice", "aud": RESOURCE, "exp": exp, "scope": "notes:read"}
    http_mock.post(f"{ISSUER}/introspect").mock(return_value=http_mock.Response(200, json=answer))
    assert await BearerTokenVerifier(settings(), http).verify_token("opaque") is None


@http_mock.mock
async def test_an_introspected_time_in_digits_is_a_time(http: BoundedClient) -> None:
    mock_idp([JWK])
    later = int(time.time()) + 120
    answer = {
        "active": True,
        "sub": "alice",
        "aud": RESOURCE,
        "exp": str(later),
        "nbf": 0,
        "scope": "notes:read",
    }
    http_mock.post(f"{ISSUER}/introspect").mock(return_value=http_mock.Response(200, json=answer))
    found = await BearerTokenVerifier(settings(), http).verify_token("opaque")
    assert found is not None
    assert found.expires_at == later


@pytest.mark.parametrize(
    "claims",
    [
        pytest.param({"aud": 5}, id="aud-number"),
        pytest.param({"aud": [5, {"x": 1}]}, id="aud-list-of-numbers"),
        pytest.param({"sub": {"a": 1}}, id="sub-object"),
        pytest.param({"sub": ["alice"]}, id="sub-list"),
        pytest.param({"preferred_username": {"a": 1}}, id="user-claim-object"),
    ],
)
@http_mock.mock
async def test_a_token_whose_claims_are_of_the_wrong_kind_is_refused(
    http: BoundedClient, claims: Any
) -> None:
    """`"aud": 5` raised TypeError from the audience check, a 500 on every request; an object as
    `sub` was made a user name by str()."""
    mock_idp([JWK])
    verifier = BearerTokenVerifier(settings(oidc_user_claim="preferred_username"), http)
    assert await verifier.verify_token(token(**claims)) is None
    assert await verifier.verify_token(token(preferred_username="alice")) is not None


@pytest.mark.parametrize(
    "keys",
    [
        pytest.param([JWK], id="a-list"),
        pytest.param({"keys": ["not-a-key", {**JWK, "alg": ["RS256"]}]}, id="odd-entries"),
        pytest.param({"keys": {"k1": JWK}}, id="keys-an-object"),
    ],
)
@http_mock.mock
async def test_a_jwks_of_the_wrong_shape_verifies_nothing_and_raises_nothing(
    http: BoundedClient, keys: Any
) -> None:
    mock_idp([])
    http_mock.get(f"{ISSUER}/jwks").mock(return_value=http_mock.Response(200, json=keys))
    assert await BearerTokenVerifier(settings(), http).verify_token(token()) is None


@http_mock.mock
async def test_discovery_that_is_no_object_is_no_metadata(http: BoundedClient) -> None:
    http_mock.get(f"{ISSUER}/.well-known/openid-configuration").mock(
        return_value=http_mock.Response(200, json=["issuer", ISSUER])
    )
    http_mock.get(f"{ISSUER}/.well-known/oauth-authorization-server").mock(
        return_value=http_mock.Response(200, json=["issuer", ISSUER])
    )
    assert await BearerTokenVerifier(settings(), http).verify_token(token()) is None
