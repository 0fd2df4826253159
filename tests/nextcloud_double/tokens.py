"""Bearer tokens the double accepts, like a Nextcloud with user_oidc (IdP JWTs) or with its own
oauth2 app (opaque tokens it issued). The double checks signature, issuer and expiry of JWTs; like
Nextcloud it does not look for this MCP server's audience."""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx
import jwt

__all__ = ["idp_jwt_validator", "issued_tokens"]


def idp_jwt_validator(issuer: str, user_claim: str = "sub", leeway: float = 0) -> Callable[[str], str | None]:
    lock = threading.Lock()
    keys: dict[str, jwt.PyJWK] = {}

    def key(kid: str) -> jwt.PyJWK | None:
        with lock:
            if kid not in keys:
                document = httpx.get(f"{issuer}/.well-known/openid-configuration", timeout=30).json()
                for entry in httpx.get(document["jwks_uri"], timeout=30).json()["keys"]:
                    keys[entry["kid"]] = jwt.PyJWK(entry)
            return keys.get(kid)

    def validate(token: str) -> str | None:
        try:
            header = jwt.get_unverified_header(token)
            found = key(str(header.get("kid")))
            if found is None:
                return None
            claims = jwt.decode(
                token,
                found.key,
                algorithms=[header["alg"]],
                issuer=issuer,
                options={"verify_aud": False},
                leeway=leeway,
            )
        except (jwt.PyJWTError, httpx.HTTPError, KeyError):
            return None
        value = claims.get(user_claim)
        return str(value) if value else None

    return validate


def issued_tokens(tokens: dict[str, str]) -> Callable[[str], str | None]:
    """Opaque tokens this 'Nextcloud' issued itself (its oauth2 app): token -> user id."""
    return tokens.get
