"""Requests that must reach only the public internet (client ID metadata documents come from
anyone): a resolver that refuses a name with any non-public address, and the same check for an
address written in the URL (aiohttp does not ask a resolver for those). The connection then goes
to an address that was checked, so a second DNS answer cannot point it elsewhere."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from nextcloud_mcp_server.outbound.errors import AddressRefused

__all__ = ["AddressRefused", "PublicOnlyResolver", "check_literal", "public_address"]


def public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not (
        ip.is_multicast or ip.is_reserved or ip.is_loopback or ip.is_link_local or ip.is_unspecified
    )


def check_literal(host: str) -> None:
    """Refuse a URL host that is a non-public IP address (names are checked when resolved)."""
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return
    if not public_address(host.strip("[]")):
        raise AddressRefused(f"{host} is a non-public address")


class PublicOnlyResolver(AbstractResolver):
    """Resolves with the system resolver, then refuses the host if any address is not public."""

    def __init__(self) -> None:
        self._inner: aiohttp.ThreadedResolver | None = None  # it binds the running loop

    async def resolve(self, host: str, port: int = 0, family: Any = socket.AF_INET) -> list[ResolveResult]:
        if self._inner is None:
            self._inner = aiohttp.ThreadedResolver()
        found = await self._inner.resolve(host, port, family)
        if not found:
            raise AddressRefused(f"{host} has no address")
        refused = [r["host"] for r in found if not public_address(r["host"])]
        if refused:
            raise AddressRefused(f"{host} resolves to a non-public address ({refused[0]})")
        return found

    async def close(self) -> None:
        if self._inner is not None:
            await self._inner.close()
