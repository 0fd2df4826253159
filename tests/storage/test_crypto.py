"""Encryption at rest: key ids, binding to table/subject/field, rotation, clear failures."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.storage.crypto import Cipher, DecryptionFailed, InvalidKey, generate_key, key_id

PLACE = {"table": "grants", "subject": "alice", "field": "secret"}


def test_round_trip_and_fresh_nonce_each_time() -> None:
    cipher = Cipher([generate_key()])
    first, second = cipher.encrypt("refresh-token", **PLACE), cipher.encrypt("refresh-token", **PLACE)
    assert first != second
    assert "refresh-token" not in first
    assert cipher.decrypt(first, **PLACE) == cipher.decrypt(second, **PLACE) == "refresh-token"


@pytest.mark.parametrize(
    "moved_to",
    [
        {"table": "grants", "subject": "mallory", "field": "secret"},
        {"table": "oauth_states", "subject": "alice", "field": "secret"},
        {"table": "grants", "subject": "alice", "field": "verifier"},
    ],
)
def test_a_ciphertext_moved_to_another_row_or_column_does_not_decrypt(moved_to: dict[str, str]) -> None:
    cipher = Cipher([generate_key()])
    sealed = cipher.encrypt("alice's token", **PLACE)
    with pytest.raises(DecryptionFailed, match="integrity check"):
        cipher.decrypt(sealed, **moved_to)


def test_tampering_is_detected() -> None:
    cipher = Cipher([generate_key()])
    sealed = cipher.encrypt("token", **PLACE)
    tampered = sealed[:-3] + ("A" if sealed[-3] != "A" else "B") + sealed[-2:]
    with pytest.raises(DecryptionFailed):
        cipher.decrypt(tampered, **PLACE)


def test_rotation_keeps_old_ciphertexts_readable_and_names_a_missing_key() -> None:
    old, new = generate_key(), generate_key()
    sealed_with_old = Cipher([old]).encrypt("token", **PLACE)
    rotated = Cipher([new, old])
    assert rotated.decrypt(sealed_with_old, **PLACE) == "token"
    assert Cipher.key_id_of(rotated.encrypt("x", **PLACE)) == rotated.current_key_id
    with pytest.raises(DecryptionFailed, match=f"encrypted with key {Cipher([old]).current_key_id}"):
        Cipher([new]).decrypt(sealed_with_old, **PLACE)


@pytest.mark.parametrize("bad", ["not base64!!", "c2hvcnQ", ""])
def test_malformed_keys_are_refused(bad: str) -> None:
    with pytest.raises(InvalidKey):
        Cipher([bad])


def test_key_ids_are_stable_and_not_the_key() -> None:
    key = generate_key()
    assert Cipher([key]).current_key_id == Cipher([key]).current_key_id
    assert key_id(b"\x00" * 32) != key_id(b"\x01" * 32)
    assert Cipher([key]).current_key_id not in key
