"""Bad input and broken Nextclouds: clear tool errors, nothing written, the server stays up."""

from __future__ import annotations

import datetime
import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pydantic import SecretStr

from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.tools import DEFAULT_TOOLSETS, all_tools
from tests.mcp_clients import http_session, running_app, structured
from tests.nextcloud_double import NextcloudDouble
from tests.nextcloud_double.server import serve_in_thread

pytestmark = pytest.mark.integration

NOTES_API = "/index.php/apps/notes/api/v1/notes"
LOCALHOST_SAN = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])


def _text(result: object) -> str:
    return result.content[0].text  # type: ignore[attr-defined, no-any-return]


def _notes_files(double: NextcloudDouble) -> list[Path]:
    root = double.user_files("admin") / "Notes"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"title": "   "}, "title must not be empty"),
        ({"title": "two\nlines"}, "title must be one line"),
        ({"title": "ok", "category": "../escape"}, "category segments must not be empty, '.' or '..'"),
        ({"title": "ok", "category": "/abs"}, "must not start or end with '/'"),
        ({"title": "ok", "category": "back\\slash"}, "backslashes"),
        ({"title": "ok", "content": "x" * 101}, "over the limit of 100 (NOTES_MAX_CONTENT_BYTES)"),
    ],
)
async def test_invalid_create_is_refused_and_writes_nothing(
    settings: Settings, double: NextcloudDouble, arguments: dict[str, str], expected: str
) -> None:
    """Each bad input gets an error saying what is wrong, and no request reaches the Notes API."""
    settings = settings.model_copy(update={"notes_max_content_bytes": 100})
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            result = await session.call_tool("nc_notes_create_note", arguments)
    assert result.is_error
    assert expected in _text(result)
    assert "nothing was changed" in _text(result)
    assert _notes_files(double) == []
    assert not [r for r in double.requests if r.path.startswith(NOTES_API)]


async def test_update_without_changes_and_unknown_ids_are_clear_errors(settings: Settings) -> None:
    """An update with nothing to change, an unknown id and an id of 0 each get a readable error."""
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            empty = await session.call_tool("nc_notes_update_note", {"note_id": 5, "etag": "x"})
            unknown = await session.call_tool("nc_notes_get_note", {"note_id": 424242})
            zero = await session.call_tool("nc_notes_get_note", {"note_id": 0})
            append = await session.call_tool("nc_notes_append_content", {"note_id": 424242, "content": "x"})
    assert empty.is_error
    assert "give at least one of title, content or category" in _text(empty)
    assert unknown.is_error
    assert "note 424242 does not exist" in _text(unknown)
    assert zero.is_error
    assert "greater than or equal to 1" in _text(zero)
    assert append.is_error
    assert "note 424242 does not exist" in _text(append)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_unreachable_nextcloud_gives_one_clear_error_and_the_server_stays_up(
    settings: Settings,
) -> None:
    """Connection refused: the error names the host and the cause; later calls are still served."""
    port = _closed_port()
    down = settings.model_copy(update={"nextcloud_host": f"http://127.0.0.1:{port}"})
    with running_app(down) as base:
        async with http_session(f"{base}/mcp") as session:
            first = await session.call_tool("nc_notes_list_notes", {})
            tools = await session.list_tools()
            second = await session.call_tool("nc_notes_get_note", {"note_id": 1})
    assert first.is_error
    assert f"Nextcloud at 127.0.0.1:{port}: connection refused" in _text(first)
    assert "Traceback" not in _text(first)
    # the default toolsets' tools and the two that reach the others on demand (docs/ADR/0070)
    assert len(tools.tools) == len([spec for spec in all_tools() if spec.toolset in DEFAULT_TOOLSETS]) + 2
    assert second.is_error
    assert "connection refused" in _text(second)


async def test_wrong_password_is_reported_as_rejected_credentials(settings: Settings) -> None:
    """A 401 from Nextcloud becomes an error that says to check the user name and app password."""
    wrong = settings.model_copy(update={"nextcloud_password": SecretStr("not-the-password")})
    with running_app(wrong) as base:
        async with http_session(f"{base}/mcp") as session:
            result = await session.call_tool("nc_notes_list_notes", {})
    assert result.is_error
    assert "credentials were rejected (401)" in _text(result)


async def test_503_on_a_read_is_retried_but_a_create_is_never_sent_twice(
    settings: Settings, double: NextcloudDouble
) -> None:
    """Idempotent GETs survive a 503; a POST answered 503 fails without being repeated."""
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            double.inject("GET", NOTES_API, 503)
            listed = await session.call_tool("nc_notes_list_notes", {})
            double.inject("POST", NOTES_API, 503)
            created = await session.call_tool("nc_notes_create_note", {"title": "once"})
    assert structured(listed)["total"] == 0
    assert [r.status for r in double.requests if r.method == "GET" and r.path == NOTES_API] == [503, 200]
    assert created.is_error
    assert "HTTP 503" in _text(created)
    assert [r.status for r in double.requests if r.method == "POST"] == [503]
    assert _notes_files(double) == []


@pytest.fixture
def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by nobody a default trust store knows."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nextcloud-double")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(LOCALHOST_SAN, False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@pytest.fixture
def https_double(double: NextcloudDouble, self_signed: tuple[Path, Path]) -> Iterator[str]:
    cert, key = self_signed
    with serve_in_thread(double, lifespan="off", ssl_certfile=str(cert), ssl_keyfile=str(key)) as url:
        yield url


async def test_untrusted_tls_certificate_is_named_as_the_cause_and_a_ca_bundle_fixes_it(
    settings: Settings, https_double: str, self_signed: tuple[Path, Path]
) -> None:
    """A self-signed certificate fails with a TLS error that points at NEXTCLOUD_CA_BUNDLE; with
    the bundle configured, the same call succeeds."""
    tls = settings.model_copy(update={"nextcloud_host": https_double})
    with running_app(tls) as base:
        async with http_session(f"{base}/mcp") as session:
            refused = await session.call_tool("nc_notes_list_notes", {})
    assert refused.is_error
    assert "TLS certificate verification failed" in _text(refused)
    assert "NEXTCLOUD_CA_BUNDLE" in _text(refused)

    trusted = tls.model_copy(update={"nextcloud_ca_bundle": self_signed[0]})
    with running_app(trusted) as base:
        async with http_session(f"{base}/mcp") as session:
            listed = await session.call_tool("nc_notes_list_notes", {})
    assert structured(listed)["total"] == 0
