"""One TLS context per test process for the tests' own HTTP clients (ADR 0068).

httpx builds a new context for every client, and building one reads the whole CA bundle: about
30 ms of CPU on an idle machine, 0.1-0.2 s on a loaded one; the suite's helpers made about five a
test. A shared context verifies exactly as a new one would (the same defaults, never changed)."""

from __future__ import annotations

import functools
import ssl

import httpx
import httpx2

__all__ = ["httpx2_verify", "httpx_verify"]


@functools.cache
def httpx_verify() -> ssl.SSLContext:
    """What `httpx.Client()` would build (certifi's bundle), built once."""
    return httpx.create_ssl_context()


@functools.cache
def httpx2_verify() -> ssl.SSLContext:
    """What `httpx2.AsyncClient()` would build (the system's bundle), built once."""
    return httpx2.create_ssl_context()
