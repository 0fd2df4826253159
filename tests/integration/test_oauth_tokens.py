"""Which bearer tokens the OAuth resource server takes: a real OpenID provider's JWTs with this
server among their audiences, forged and malformed ones refused with the challenge, opaque
tokens introspected, Nextcloud's OAuth2 tokens checked by asking Nextcloud."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from tests.mcp_clients import INITIALIZE, MCP_HEADERS, http_session, structured
from tests.nextcloud_double import NextcloudDouble
from tests.nextcloud_double.tokens import issued_tokens
from tests.oauth_server import (  # noqa: F401 - the fixture
    ON_DEMAND,
    OAuthServer,
    claims,
    default_tools,
    oauth_server,
    server_fixture,
)
from tests.oidc import IdP

pytestmark = pytest.mark.integration


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


async def test_a_valid_token_with_our_audience_among_others_reaches_nextcloud(
    server: OAuthServer, idp: IdP, double: NextcloudDouble
) -> None:
    """A token from a real code + PKCE flow (aud = [this server, another API]) lists all tools and
    writes a file; Nextcloud receives the caller's own token (pass-through). The Notes API of
    Nextcloud 29 refuses it, as recorded: tried once as Bearer, once as Basic, then a clear error."""
    token = idp.access_token(user="admin", resource=server.mcp)
    assert jwt.decode(token, options={"verify_signature": False})["aud"] == [
        server.mcp,
        "https://other-api.example/",
    ]
    async with http_session(server.mcp, headers={"Authorization": f"Bearer {token}"}) as session:
        tools = (await session.list_tools()).tools
        written = structured(
            await session.call_tool("nc_webdav_write_file", {"path": "via-oauth.txt", "content": "hi"})
        )
        files = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
        notes = await session.call_tool("nc_notes_list_notes", {})
    assert {t.name for t in tools} == {t.name for t in default_tools()} | ON_DEMAND
    assert written["created"] is True
    assert (double.user_files("admin") / "via-oauth.txt").read_text() == "hi"
    assert [e["name"] for e in files["entries"]] == ["via-oauth.txt"]
    assert {r.scheme for r in double.requests if r.path.startswith("/remote.php")} == {"bearer"}
    assert notes.is_error
    assert "refuses OAuth Bearer tokens" in notes.content[0].text  # type: ignore[union-attr]
    notes_calls = [r.status for r in double.requests if r.path.startswith("/index.php")]
    assert notes_calls == [401, 401]  # as Bearer ('CORS requires basic auth'), then as Basic


def _forged(server: OAuthServer, idp: IdP, kind: str) -> str | None:
    rsa_jwk = next(k for k in idp.jwks()["keys"] if k["kty"] == "RSA")
    public_pem = jwt.PyJWK(rsa_jwk).key.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    now = int(time.time())
    if kind == "missing":
        return None
    if kind == "garbage":
        return "not-a-token"
    if kind == "other audience only":
        return idp.sign(claims(server, idp, aud="https://other-api.example/"))
    if kind == "no audience":
        return idp.sign(claims(server, idp, aud=None))
    if kind == "expired":
        return idp.sign(claims(server, idp, iat=now - 7200, exp=now - 3600))
    if kind == "not yet valid":
        return idp.sign(claims(server, idp, nbf=now + 3600))
    if kind == "issued in the future":
        return idp.sign(claims(server, idp, iat=now + 3600))
    if kind == "wrong issuer":
        return idp.sign(claims(server, idp, iss="https://evil.example"))
    if kind == "alg none":
        return f"{_b64({'alg': 'none', 'typ': 'JWT', 'kid': 'rsa-1'})}.{_b64(claims(server, idp))}."
    if kind == "HS256 with the public key":
        # The classic confusion attack: the RSA public key (which anyone can fetch) as HMAC secret.
        signing_input = f"{_b64({'alg': 'HS256', 'typ': 'JWT', 'kid': 'rsa-1'})}.{_b64(claims(server, idp))}"
        mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
    if kind == "tampered payload":
        header, _, signature = idp.sign(claims(server, idp, scope="notes:read")).split(".")
        return f"{header}.{_b64(claims(server, idp, scope='notes:read notes:write files:write'))}.{signature}"
    if kind == "unknown kid":
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return jwt.encode(claims(server, idp), key, algorithm="RS256", headers={"kid": "attacker-1"})
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "missing",
        "garbage",
        "other audience only",
        "no audience",
        "expired",
        "not yet valid",
        "issued in the future",
        "wrong issuer",
        "alg none",
        "HS256 with the public key",
        "tampered payload",
        "unknown kid",
    ],
)
def test_bad_tokens_get_401_with_the_challenge(server: OAuthServer, idp: IdP, kind: str) -> None:
    """Each refused token is a 401 whose WWW-Authenticate points at the resource metadata."""
    response = server.post(_forged(server, idp, kind), INITIALIZE)
    assert response.status_code == 401, response.text
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="invalid_token"')
    assert f'resource_metadata="{server.metadata_url}"' in challenge


def test_a_well_signed_token_with_only_our_audience_is_accepted(server: OAuthServer, idp: IdP) -> None:
    """The control for the forgeries: the same signing path with good claims works."""
    response = server.post(idp.sign(claims(server, idp)), INITIALIZE)
    assert response.status_code == 200, response.text


def test_opaque_tokens_are_introspected(double: NextcloudDouble, double_url: str, opaque_idp: IdP) -> None:
    """An opaque token for our resource is accepted after RFC 7662 introspection (with client
    authentication); an opaque token the IdP does not know is refused."""
    with oauth_server(double, double_url, opaque_idp) as server:
        token = opaque_idp.access_token(user="admin", resource=server.mcp, scope="notes:read")
        assert token.count(".") != 2
        accepted = server.post(token, INITIALIZE)
        refused = server.post("opaque-but-unknown-token-value", INITIALIZE)
    assert accepted.status_code == 200, accepted.text
    assert refused.status_code == 401


async def test_nextcloud_oauth2_tokens_are_validated_by_asking_nextcloud(
    double: NextcloudDouble, double_url: str, idp: IdP
) -> None:
    """OIDC_OPAQUE_TOKENS=nextcloud: an opaque token Nextcloud issued maps to its user."""
    double.accounts.add_bearer_validator(
        issued_tokens({"nc-oauth2-token-for-alice": "alice"}), as_basic_password=True
    )
    with oauth_server(double, double_url, idp, oidc_opaque_tokens="nextcloud") as server:
        async with http_session(
            server.mcp, headers={"Authorization": "Bearer nc-oauth2-token-for-alice"}
        ) as s:
            created = structured(await s.call_tool("nc_notes_create_note", {"title": "Alice's"}))
        unknown = server.post("nc-oauth2-token-nobody-issued", INITIALIZE)
        # outside ASCII, the check at Nextcloud raised InvalidInput: a 500 for any caller
        odd = httpx.post(
            server.mcp,
            json=INITIALIZE,
            headers={**MCP_HEADERS, "Authorization": "Bearer nc-oauth2-\u00e9".encode("latin-1")},
            timeout=10,
        )
    assert created["title"] == "Alice's"
    assert (double.user_files("alice") / "Notes" / "Alice's.md").exists()
    assert unknown.status_code == 401
    assert odd.status_code == 401, odd.text[:200]
