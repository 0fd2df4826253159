"""Who is calling, by address: the one place that decides (ADR 0034).

uvicorn's own proxy-header handling is switched off (`front.uvicorn_options`): by default it
trusts `X-Forwarded-For` from 127.0.0.1, so any local process could claim any address and get a
fresh budget from every per-address limit. Here `X-Forwarded-For` (and `X-Forwarded-Proto`) count
only when the connection comes from a proxy named in FORWARDED_ALLOW_IPS (addresses or networks;
default: none). The client is then the right-most address in `X-Forwarded-For` that is not one of
those proxies: each trusted proxy appends the address it saw, so what lies to the left of the
first untrusted one is whatever the client claimed.

`ClientAddress` resolves it once per request and sets `scope["client"]`; everything else asks
`client_address(scope)`, and per-address limits count by `client_bucket(scope)` (an IPv6 client
by its /64, the block one subscriber usually holds).
"""

from __future__ import annotations

import ipaddress
import logging

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["ClientAddress", "TrustedProxies", "client_address", "client_bucket", "parse_trusted_proxies"]

logger = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
UNKNOWN = "unknown"
MAX_HOPS = 20


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.partition(":")[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def parse_trusted_proxies(value: str) -> list[Network]:
    """FORWARDED_ALLOW_IPS: comma-separated addresses or networks; raises ValueError saying why."""
    networks: list[Network] = []
    for item in filter(None, (part.strip() for part in value.split(","))):
        if item == "*":
            raise ValueError(
                "must name the reverse proxy's addresses or networks (e.g. 10.0.0.5 or 172.16.0.0/12); "
                "'*' would let any client choose the address every per-address limit counts"
            )
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"must be comma-separated IP addresses or networks, not {item!r}") from None
    return networks


class TrustedProxies:
    def __init__(self, networks: list[Network]) -> None:
        self.networks = networks

    def trusts(self, address: str) -> bool:
        ip = _ip(address)
        return ip is not None and any(ip in network for network in self.networks)

    def client_of(self, peer: str, forwarded_for: list[str]) -> str:
        """The client's address, given the connection's `peer` and the X-Forwarded-For values."""
        if not self.trusts(peer):
            return peer
        hops = [hop.strip() for value in forwarded_for for hop in value.split(",") if hop.strip()]
        client = peer
        for hop in reversed(hops[-MAX_HOPS:]):
            ip = _ip(hop)
            if ip is None:
                return client  # not an address: stop at the last proxy we trust
            client = str(ip)
            if not self.trusts(client):
                return client
        return client


def _header(scope: Scope, name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope.get("headers", ()) if key.lower() == name]


class ClientAddress:
    """Outermost middleware: sets `scope["client"]` to the client's address (and `scope["scheme"]`
    from `X-Forwarded-Proto`) when the connection comes from a trusted proxy."""

    def __init__(self, app: ASGIApp, trusted: TrustedProxies) -> None:
        self.app = app
        self.trusted = trusted
        self._hinted = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            peer, port = scope.get("client") or (UNKNOWN, 0)
            forwarded = _header(scope, b"x-forwarded-for")
            if forwarded and self.trusted.trusts(peer):
                scope = {**scope, "client": (self.trusted.client_of(peer, forwarded), port)}
                proto = ",".join(_header(scope, b"x-forwarded-proto")).strip().lower()
                if proto in ("http", "https") and scope["type"] == "http":
                    scope["scheme"] = proto
            elif forwarded and not self._hinted:
                self._hinted = True
                logger.info(
                    "X-Forwarded-For from %s is ignored: per-address limits count that address. If it is "
                    "your reverse proxy, set FORWARDED_ALLOW_IPS=%s",
                    peer,
                    peer,
                )
        await self.app(scope, receive, send)


def client_address(scope: Scope) -> str:
    """The client's address, as `ClientAddress` resolved it."""
    client = scope.get("client")
    return str(client[0]) if client else UNKNOWN


def client_bucket(scope: Scope) -> str:
    """What per-address limits count: the address, an IPv6 one by its /64."""
    address = client_address(scope)
    ip = _ip(address)
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip) if ip is not None else address
