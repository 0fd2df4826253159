"""This server's token signing keys: generated on first start, private halves sealed with the
store's cipher, public halves published as JWKS.

Rotation: when the newest key is older than AUTH_SERVER_KEY_MAX_AGE_DAYS (checked at start-up and
by housekeeping) or on `rotate()`, a new key signs from then on; the previous one is retired but
stays published until every token it signed has expired (access token lifetime + leeway), then
it is deleted.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from nextcloud_mcp_server.storage.connection import Connection
from nextcloud_mcp_server.storage.crypto import Cipher, DecryptionFailed

__all__ = ["SigningKeys"]

LEEWAY_SECONDS = 120.0


@dataclass(frozen=True)
class _Key:
    kid: str
    alg: str
    created_at: float
    retired_at: float | None
    public: jwt.PyJWK
    public_jwk: dict[str, Any]
    # loaded once: loading an RSA private key checks it, which costs tens of milliseconds
    private: PrivateKey | None


PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


def _load(pem: str) -> PrivateKey:
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise ValueError("a stored signing key is neither EC nor RSA")
    return key


def _generate(alg: str) -> tuple[str, dict[str, Any]]:
    """A new private key (PEM) and its public JWK."""
    private: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
    if alg == "ES256":
        ec_key = ec.generate_private_key(ec.SECP256R1())
        jwk = json.loads(ECAlgorithm.to_jwk(ec_key.public_key()))
        private = ec_key
    else:
        rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=3072)
        jwk = json.loads(RSAAlgorithm.to_jwk(rsa_key.public_key()))
        private = rsa_key
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return pem, jwk


class SigningKeys:
    """The key set on the store's SQLite connection. `load()` before use."""

    def __init__(
        self,
        db: Connection,
        cipher: Cipher,
        *,
        algorithm: str,
        max_age_seconds: float,
        token_lifetime_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self._cipher = cipher
        self.algorithm = algorithm
        self.max_age = max_age_seconds
        self.token_lifetime = token_lifetime_seconds
        self._clock = clock
        self._keys: list[_Key] = []

    async def load(self) -> None:
        """Read the keys; make the first one, or a new one when the newest is too old."""
        await self._read()
        current = self._current()
        too_old = current is not None and self._clock() - current.created_at > self.max_age
        # no private half: sealed with an encryption key that was removed since
        if current is None or current.private is None or current.alg != self.algorithm or too_old:
            await self.rotate()

    async def _read(self) -> None:
        query = "SELECT kid, alg, private_key, public_jwk, created_at, retired_at FROM authz_keys"
        async with self._db.execute(query) as cursor:
            rows = await cursor.fetchall()
        keys = []
        loaded_before = {k.kid: k.private for k in self._keys}
        for kid, alg, sealed, public_jwk, created_at, retired_at in rows:
            jwk = json.loads(public_jwk)
            private = None
            if retired_at is None:
                try:
                    private = self._cipher.decrypt(
                        sealed, table="authz_keys", subject=kid, field="private_key"
                    )
                except DecryptionFailed:  # its encryption key was removed: load() makes a new one
                    private = None
            known = loaded_before.get(kid)  # housekeeping re-reads every minute: no reload
            loaded = (known or _load(private)) if private is not None else None
            keys.append(_Key(kid, alg, created_at, retired_at, jwt.PyJWK(jwk, alg), jwk, loaded))
        self._keys = sorted(keys, key=lambda k: k.created_at)

    def _current(self) -> _Key | None:
        live = [k for k in self._keys if k.retired_at is None]
        return live[-1] if live else None

    async def rotate(self) -> str:
        """A new signing key from now on; returns its key id. The old public key stays published
        until its tokens have expired."""
        now = self._clock()
        kid = secrets.token_urlsafe(12)
        pem, jwk = _generate(self.algorithm)
        jwk.update({"kid": kid, "alg": self.algorithm, "use": "sig"})
        sealed = self._cipher.encrypt(pem, table="authz_keys", subject=kid, field="private_key")
        await self._db.execute("UPDATE authz_keys SET retired_at = ? WHERE retired_at IS NULL", (now,))
        # A retired key's private half is not needed any more.
        await self._db.execute("UPDATE authz_keys SET private_key = '' WHERE retired_at IS NOT NULL")
        await self._db.execute(
            "INSERT INTO authz_keys (kid, alg, private_key, public_jwk, created_at) VALUES (?, ?, ?, ?, ?)",
            (kid, self.algorithm, sealed, json.dumps(jwk), now),
        )
        await self._db.commit()
        await self.prune()
        return kid

    async def prune(self) -> None:
        """Forget retired keys whose tokens have all expired."""
        until = self._clock() - self.token_lifetime - LEEWAY_SECONDS
        await self._db.execute(
            "DELETE FROM authz_keys WHERE retired_at IS NOT NULL AND retired_at < ?", (until,)
        )
        await self._db.commit()
        await self._read()

    async def tidy(self) -> None:
        """Housekeeping: rotate an old key, forget expired ones."""
        await self.load()
        await self.prune()

    def jwks(self) -> dict[str, Any]:
        return {"keys": [k.public_jwk for k in self._keys]}

    async def key_for(self, kid: str | None, algorithm: str) -> jwt.PyJWK | None:
        """The published key `kid` if it signs with `algorithm` (the verifier's key source)."""
        for key in self._keys:
            if key.kid == kid and key.alg == algorithm:
                return key.public
        return None

    def sign(self, claims: dict[str, Any]) -> str:
        current = self._current()
        if current is None or current.private is None:
            raise RuntimeError("no signing key: SigningKeys.load() was not called")
        return jwt.encode(claims, current.private, algorithm=current.alg, headers={"kid": current.kid})
