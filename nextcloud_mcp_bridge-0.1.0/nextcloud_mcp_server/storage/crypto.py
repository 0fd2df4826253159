"""Encryption of secrets at rest: AES-256-GCM, key ids, and binding to where a secret belongs.

Keys come from `TOKEN_ENCRYPTION_KEY` (comma-separated) or `TOKEN_ENCRYPTION_KEY_FILE` (one per
line); each is 32 random bytes in url-safe base64 (`nextcloud-mcp-bridge keys generate`). The
first key encrypts; all of them decrypt, so keys can be rotated (`keys rotate` re-encrypts
everything under the first).

A ciphertext is `v1.<key id>.<base64(nonce | ciphertext | tag)>`. The key id is derived from the
key, so a ciphertext says which key it needs. The associated data names the table, the row's
subject and the field: a ciphertext copied to another row or column no longer decrypts.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from nextcloud_mcp_server.storage.errors import DecryptionFailed, InvalidKey

__all__ = ["Cipher", "DecryptionFailed", "InvalidKey", "derived_keys", "generate_key", "key_id"]

VERSION = "v1"


def generate_key() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")


def _decode_key(text: str) -> bytes:
    cleaned = text.strip()
    try:
        raw = base64.urlsafe_b64decode(cleaned + "=" * (-len(cleaned) % 4))
    except (binascii.Error, ValueError):
        raise InvalidKey("a TOKEN_ENCRYPTION_KEY entry is not base64") from None
    if len(raw) != 32:
        raise InvalidKey(f"a TOKEN_ENCRYPTION_KEY entry decodes to {len(raw)} bytes, not 32")
    return raw


def derived_keys(keys: Iterable[str], purpose: str) -> list[bytes]:
    """A key for `purpose` from each configured key, in the same order (the first is current):
    HKDF-SHA256 with the purpose as its info, so no key ever serves two purposes and knowing a
    derived key reveals neither the configured one nor the keys derived for other purposes."""
    info = f"nextcloud-mcp-bridge/{purpose}".encode()
    return [
        HKDF(algorithm=SHA256(), length=32, salt=None, info=info).derive(_decode_key(k))
        for k in keys
        if k.strip()
    ]


def key_id(key: bytes) -> str:
    """A short, stable, non-secret name for a key (not usable to recover it)."""
    return hashlib.sha256(b"nextcloud-mcp-key-id:" + key).hexdigest()[:12]


@dataclass(frozen=True)
class _Key:
    id: str
    aead: AESGCM


class Cipher:
    """Encrypts with the first key, decrypts with any configured key."""

    def __init__(self, keys: Iterable[str]) -> None:
        decoded = [_decode_key(k) for k in keys if k.strip()]
        if not decoded:
            raise InvalidKey("no encryption key configured")
        self._keys = [_Key(key_id(k), AESGCM(k)) for k in decoded]
        self._by_id = {k.id: k for k in self._keys}

    @property
    def current_key_id(self) -> str:
        return self._keys[0].id

    @property
    def key_ids(self) -> list[str]:
        return [k.id for k in self._keys]

    @staticmethod
    def associated_data(table: str, subject: str, field: str) -> bytes:
        return f"{table}\x00{subject}\x00{field}".encode()

    def encrypt(self, plaintext: str, *, table: str, subject: str, field: str) -> str:
        key = self._keys[0]
        nonce = os.urandom(12)
        sealed = key.aead.encrypt(nonce, plaintext.encode(), self.associated_data(table, subject, field))
        return f"{VERSION}.{key.id}.{base64.urlsafe_b64encode(nonce + sealed).decode()}"

    @staticmethod
    def key_id_of(ciphertext: str) -> str | None:
        parts = ciphertext.split(".", 2)
        return parts[1] if len(parts) == 3 and parts[0] == VERSION else None

    def decrypt(self, ciphertext: str, *, table: str, subject: str, field: str) -> str:
        parts = ciphertext.split(".", 2)
        if len(parts) != 3 or parts[0] != VERSION:
            raise DecryptionFailed("the stored secret is not in a format this version knows")
        key = self._by_id.get(parts[1])
        if key is None:
            raise DecryptionFailed(
                f"the stored secret was encrypted with key {parts[1]}, which is not configured "
                "(TOKEN_ENCRYPTION_KEY); add that key back, listed after the current one"
            )
        try:
            blob = base64.urlsafe_b64decode(parts[2])
            plain = key.aead.decrypt(blob[:12], blob[12:], self.associated_data(table, subject, field))
        except (InvalidTag, ValueError, binascii.Error):
            raise DecryptionFailed(
                f"a stored secret in {table} failed its integrity check (tampered, or moved to another row)"
            ) from None
        return plain.decode()
