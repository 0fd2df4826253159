"""One place decides who is calling, by address (issue 31, finding 5): X-Forwarded-For counts only
from the proxies in FORWARDED_ALLOW_IPS, never from loopback by default, and every per-address
limit counts what `client_address.py` says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from nextcloud_mcp_server.config import ConfigError, load_settings
from nextcloud_mcp_server.inbound.client_address import (
    ClientAddress,
    TrustedProxies,
    client_address,
    client_bucket,
    parse_trusted_proxies,
)
from nextcloud_mcp_server.web.front import uvicorn_options
from tests.authz_server import authz_server

PACKAGE = Path(__file__).resolve().parents[1] / "nextcloud_mcp_server"
REDIRECT = "http://127.0.0.1:9/cb"


def proxies(value: str) -> TrustedProxies:
    return TrustedProxies(parse_trusted_proxies(value))


@pytest.mark.parametrize(
    ("trusted", "peer", "forwarded", "client"),
    [
        ("", "127.0.0.1", ["203.0.113.7"], "127.0.0.1"),  # nobody trusted: not even loopback
        ("10.0.0.5", "198.51.100.9", ["203.0.113.7"], "198.51.100.9"),  # not from the proxy
        ("10.0.0.5", "10.0.0.5", ["203.0.113.7"], "203.0.113.7"),
        ("10.0.0.5", "10.0.0.5", ["1.1.1.1, 203.0.113.7"], "203.0.113.7"),  # what the client claimed: ignored
        ("10.0.0.0/8", "10.0.0.5", ["1.1.1.1, 203.0.113.7, 10.0.0.9"], "203.0.113.7"),  # two proxies
        ("10.0.0.0/8", "10.0.0.5", ["1.1.1.1", "203.0.113.7"], "203.0.113.7"),  # the header twice
        ("10.0.0.5", "10.0.0.5", ["garbage"], "10.0.0.5"),
        ("10.0.0.5", "10.0.0.5", ["[2001:db8::1]:443"], "2001:db8::1"),
        ("10.0.0.5", "::ffff:10.0.0.5", ["203.0.113.7"], "203.0.113.7"),
        ("127.0.0.1", "127.0.0.1", ["203.0.113.7"], "203.0.113.7"),  # a local proxy, when named
    ],
)
def test_the_client_is_the_rightmost_address_no_trusted_proxy_added(
    trusted: str, peer: str, forwarded: list[str], client: str
) -> None:
    assert proxies(trusted).client_of(peer, forwarded) == client


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("*", "FORWARDED_ALLOW_IPS must name the reverse proxy's addresses"),
        ("10.0.0.5, proxy.example", "FORWARDED_ALLOW_IPS must be comma-separated IP addresses or networks"),
    ],
)
def test_a_bad_proxy_list_stops_the_start(value: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(env_file=None, forwarded_allow_ips=value)
    [problem] = caught.value.problems
    assert problem.startswith(message)


def test_uvicorn_never_reads_forwarded_headers_itself() -> None:
    """uvicorn's default trusts X-Forwarded-For from 127.0.0.1: it is switched off."""
    assert uvicorn_options(load_settings(env_file=None))["proxy_headers"] is False


async def test_the_middleware_sets_the_client_and_the_scheme_only_from_a_trusted_proxy() -> None:
    seen: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope)

    headers = [(b"x-forwarded-for", b"203.0.113.7"), (b"x-forwarded-proto", b"https")]
    middleware = ClientAddress(app, proxies("10.0.0.5"))
    for peer in ("10.0.0.5", "198.51.100.9"):
        scope = {"type": "http", "client": (peer, 4711), "scheme": "http", "headers": headers}
        await middleware(scope, None, None)
    assert [(client_address(s), s["scheme"]) for s in seen] == [
        ("203.0.113.7", "https"),
        ("198.51.100.9", "http"),
    ]


def test_an_ipv6_client_is_counted_by_its_64() -> None:
    one = {"client": ("2001:db8:1:2::1", 1)}
    other = {"client": ("2001:db8:1:2:ffff::9", 1)}
    elsewhere = {"client": ("2001:db8:1:3::1", 1)}
    assert client_bucket(one) == client_bucket(other) == "2001:db8:1:2::/64"
    assert client_bucket(elsewhere) != client_bucket(one)
    assert client_bucket({"client": ("203.0.113.7", 1)}) == "203.0.113.7"


def test_nothing_else_reads_the_connection_address() -> None:
    """Every per-address decision goes through client_address.py."""
    readers = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if re.search(r"""scope(\.get\(|\[)["']client["']""", path.read_text())
    ]
    assert readers == ["inbound/client_address.py"]


def register_from(server: Any, forwarded_for: str) -> int:
    body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    with server.http() as http:
        return int(http.post("/register", json=body, headers={"X-Forwarded-For": forwarded_for}).status_code)


def test_a_local_caller_cannot_buy_fresh_budgets_with_x_forwarded_for(
    double_url: str, tmp_path: Path
) -> None:
    """The reviewer's attack: 100 registrations from loopback, each claiming another address."""
    with authz_server(double_url, tmp_path / "s.sqlite3", auth_server_dcr_per_minute=5) as server:
        answers = [register_from(server, f"203.0.113.{i}") for i in range(20)]
    assert answers == [201] * 5 + [429] * 15


def test_behind_a_named_proxy_each_client_has_its_own_budget(double_url: str, tmp_path: Path) -> None:
    with authz_server(
        double_url, tmp_path / "s.sqlite3", auth_server_dcr_per_minute=2, forwarded_allow_ips="127.0.0.1"
    ) as server:
        first = [register_from(server, "198.51.100.1") for _ in range(3)]
        second = [register_from(server, "1.1.1.1, 198.51.100.2") for _ in range(3)]
    assert first == second == [201, 201, 429]
