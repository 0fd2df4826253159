"""The test IdP (tests/idp/server.mjs on npm's `oidc-provider`, run with Node 22 from npm) and a
client that runs its flows the way a browser would: code + PKCE S256, following redirects, with
login_hint choosing the account (the IdP's auto-interaction stands in for the person)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from nextcloud_mcp_server.toolsets import scopes
from tests.tls import httpx_verify

__all__ = ["PKCE", "IdP", "follow_to_redirect", "running_idp"]

IDP_DIR = Path(__file__).parent / "idp"
NODE = IDP_DIR / "node_modules" / ".bin" / "node"
# every scope of the server, from the toolsets' declarations; the IdP gets them too (SCOPES)
APP_SCOPES = " ".join(scope.name for scope in scopes())


@dataclass(frozen=True)
class PKCE:
    verifier: str
    challenge: str

    @classmethod
    def new(cls) -> PKCE:
        verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
        digest = hashlib.sha256(verifier.encode()).digest()
        return cls(verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode())


def follow_to_redirect(url: str, redirect_prefix: str, client: httpx.Client | None = None) -> str:
    """Follow redirects like a browser until one points at `redirect_prefix`; return that URL."""
    browser = client or httpx.Client(timeout=10, verify=httpx_verify())
    try:
        for _ in range(20):
            response = browser.get(url)
            if response.status_code not in (301, 302, 303, 307, 308):
                raise AssertionError(f"{url} answered {response.status_code}: {response.text[:300]}")
            url = str(httpx.URL(url).join(response.headers["location"]))
            if url.startswith(redirect_prefix):
                return url
        raise AssertionError("too many redirects")
    finally:
        if client is None:
            browser.close()


class IdP:
    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        self.http = httpx.Client(timeout=10)
        self.metadata: dict[str, Any] = self.http.get(f"{issuer}/.well-known/openid-configuration").json()

    def register(
        self, redirect_uri: str, *, scope: str = f"openid offline_access profile {APP_SCOPES}"
    ) -> str:
        """Dynamic client registration (RFC 7591) of a public client; returns its client_id."""
        answer = self.http.post(
            self.metadata["registration_endpoint"],
            json={
                "client_name": "test client",
                "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                "scope": scope,
            },
        )
        assert answer.status_code == 201, answer.text
        return str(answer.json()["client_id"])

    def register_confidential(self, redirect_uri: str) -> tuple[str, str]:
        """A confidential client (this MCP server's own, for offline access): (id, secret)."""
        answer = self.http.post(
            self.metadata["registration_endpoint"],
            json={
                "client_name": "nextcloud-mcp-server",
                "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "client_secret_basic",
                "scope": f"openid offline_access profile email {APP_SCOPES}",
            },
        )
        assert answer.status_code == 201, answer.text
        return str(answer.json()["client_id"]), str(answer.json()["client_secret"])

    def token(
        self,
        *,
        user: str,
        resource: str,
        scope: str = APP_SCOPES,
        client_id: str | None = None,
        client_secret: str | None = None,
        redirect_uri: str = "http://127.0.0.1:1/callback",
        offline: bool = False,
    ) -> dict[str, Any]:
        """An access token for `user` and `resource` through the full code + PKCE flow."""
        client_id = client_id or self.register(redirect_uri)
        pkce, state = PKCE.new(), secrets.token_urlsafe(8)
        query = urlencode(
            {
                "client_id": client_id,
                "response_type": "code",
                "redirect_uri": redirect_uri,
                "scope": f"openid {'offline_access ' if offline else ''}{scope}",
                "state": state,
                "code_challenge": pkce.challenge,
                "code_challenge_method": "S256",
                "resource": resource,
                "login_hint": user,
                "prompt": "consent",
            }
        )
        landed = follow_to_redirect(f"{self.metadata['authorization_endpoint']}?{query}", redirect_uri)
        params = parse_qs(urlsplit(landed).query)
        assert params["state"] == [state], params
        data = {
            "grant_type": "authorization_code",
            "code": params["code"][0],
            "redirect_uri": redirect_uri,
            "code_verifier": pkce.verifier,
            "resource": resource,
        }
        if client_secret is None:
            data["client_id"] = client_id
        auth = (client_id, client_secret) if client_secret is not None else None
        answer = self.http.post(self.metadata["token_endpoint"], data=data, auth=auth)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def access_token(self, *, user: str, resource: str, scope: str = APP_SCOPES) -> str:
        return str(self.token(user=user, resource=resource, scope=scope)["access_token"])

    def sign(self, payload: dict[str, Any], header: dict[str, Any] | None = None) -> str:
        """A JWT signed with the IdP's own RSA key (TEST_SIGNING): good signature, chosen claims."""
        answer = self.http.post(f"{self.issuer}/test/sign", json={"payload": payload, "header": header or {}})
        assert answer.status_code == 200, answer.text
        return str(answer.json()["token"])

    def jwks(self) -> dict[str, Any]:
        return dict(self.http.get(self.metadata["jwks_uri"]).json())


@contextmanager
def running_idp(**env: str) -> Iterator[IdP]:
    """Start tests/idp/server.mjs with `env`; stop it on exit."""
    if not NODE.exists():
        raise RuntimeError(f"{NODE} is missing: run `make test` (it runs npm ci in tests/idp)")
    process = subprocess.Popen(
        [str(NODE), str(IDP_DIR / "server.mjs")],
        cwd=IDP_DIR,
        env={"PATH": os.environ.get("PATH", ""), "PORT": "0", "TEST_SIGNING": "1", "SCOPES": APP_SCOPES}
        | env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        while True:  # the IdP prints its ready line (after any warnings), or exits
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"the IdP exited with {process.wait()}")
            if line.startswith("{") and json.loads(line).get("ready"):
                break
        idp = IdP(json.loads(line)["issuer"])
        yield idp
        idp.http.close()
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout:
            process.stdout.close()
