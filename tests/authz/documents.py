"""A local HTTPS server (certificate from a throwaway CA) serving client ID metadata documents,
good and hostile: too big, never answering, naming another client_id, redirecting, sending answers
to `javascript:`, a name that reverses text."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from tests.nextcloud_double.server import serve_in_thread

__all__ = ["DocumentHost", "document_host"]


def _certificate(tmp_path: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "metadata documents")])
    now = datetime.datetime.now(datetime.UTC)
    san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(san, False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cimd-cert.pem", tmp_path / "cimd-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key_path.write_bytes(pem)
    return cert_path, key_path


@dataclass
class DocumentHost:
    base: str
    ca_bundle: Path
    redirect_uri: str
    fetched: list[str]

    def url(self, name: str) -> str:
        return f"{self.base}/{name}"


@contextmanager
def document_host(
    tmp_path: Path, redirect_uri: str = "http://127.0.0.1:9/cimd-callback"
) -> Iterator[DocumentHost]:
    cert, key = _certificate(tmp_path)
    fetched: list[str] = []
    base_box: list[str] = []

    def document(name: str, **extra: Any) -> dict[str, Any]:
        return {
            "client_id": f"{base_box[0]}/{name}",
            "client_name": "Metadata document client",
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            **extra,
        }

    async def serve(request: Request) -> Response:
        name = request.path_params["name"]
        fetched.append(name)
        if name == "good.json":
            return JSONResponse(document(name))
        if name == "big.json":
            return JSONResponse(document(name, padding="x" * 64 * 1024))
        if name == "other-id.json":
            return JSONResponse(document("good.json"))
        if name == "redirect.json":
            return RedirectResponse(f"{base_box[0]}/good.json")
        if name == "not-json.json":
            return Response("<html>hello</html>", media_type="text/html")
        if name == "secret.json":
            return JSONResponse(document(name, token_endpoint_auth_method="client_secret_post"))
        if name == "javascript.json":
            return JSONResponse(document(name, redirect_uris=["javascript:alert(document.cookie)"]))
        if name == "bidi-name.json":
            return JSONResponse(document(name, client_name="Notes \u202ereppleh"))
        if name == "silent.json":
            await asyncio.Event().wait()  # never answers: only the fetch deadline ends this
        return Response(status_code=404)

    app = Starlette(routes=[Route("/{name}", serve)])
    with serve_in_thread(
        app, lifespan="off", ssl_certfile=str(cert), ssl_keyfile=str(key), timeout_graceful_shutdown=1
    ) as base:
        base_box.append(base)
        yield DocumentHost(base, cert, redirect_uri, fetched)
