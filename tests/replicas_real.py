"""Two replicas in front of the real Nextcloud, for tests and benchmarks: server processes with
Nextcloud's OAuth2 app as the consent provider, a shared PostgreSQL database, the IdP for the MCP
clients and Debian's nginx with the shipped configuration (round robin for requests without a
session id, which is every request of a 2026-07-28 client)."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import psycopg
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.backends import Nextcloud
from tests.nginx import running_nginx
from tests.offline import KEY
from tests.oidc import IdP
from tests.postgres import PostgresCluster
from tests.processes import free_port, server_process

__all__ = ["Deployment", "client_at", "real_replicas", "token_requests"]

TOKEN_PATH = "POST /index.php/apps/oauth2/api/v1/token "


@dataclass
class Deployment:
    base: str  # nginx
    replicas: dict[str, str]  # REPLICA_ID -> its own base URL
    processes: dict[str, subprocess.Popen[str]]
    store_url: str
    bearer: str  # alice's, for the MCP clients
    nextcloud: Nextcloud
    postgres: PostgresCluster

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.store_url) as db:
            return db.execute(query).fetchall()  # type: ignore[arg-type]


@contextmanager
def real_replicas(
    nextcloud: Nextcloud, idp: IdP, postgres: PostgresCluster, workdir: Path
) -> Iterator[Deployment]:
    assert nextcloud.instance is not None
    ports = {"a": free_port(), "b": free_port()}
    nginx_port = free_port()
    base = f"http://127.0.0.1:{nginx_port}"
    client = nextcloud.instance.oauth_client(f"MCP replicas {nginx_port}", f"{base}/oauth/callback-nextcloud")
    with ExitStack() as stack:
        store_url = stack.enter_context(postgres.database())
        env = {
            "NEXTCLOUD_HOST": nextcloud.url,
            "OIDC_ISSUER": idp.issuer,
            "MCP_PUBLIC_URL": f"{base}/mcp",
            "ENABLE_OFFLINE_ACCESS": "true",
            "NEXTCLOUD_CONSENT_PROVIDER": "nextcloud-oauth2",
            "NEXTCLOUD_OAUTH2_CLIENT_ID": client["client_id"],
            "NEXTCLOUD_OAUTH2_CLIENT_SECRET": client["client_secret"],
            "TOKEN_ENCRYPTION_KEY": KEY,
            "STORE_URL": store_url,
            "LOG_LEVEL": "WARNING",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        processes = {
            replica: stack.enter_context(
                server_process(
                    ["run", "--transport", "http", "--port", str(port)],
                    env={**env, "REPLICA_ID": replica},
                    cwd=workdir,
                    ready_url=f"http://127.0.0.1:{port}/health",
                )
            )
            for replica, port in ports.items()
        }
        upstreams = {f"mcp-{r}:8000": f"127.0.0.1:{port}" for r, port in ports.items()}
        assert stack.enter_context(running_nginx(upstreams, nginx_port)) == base
        yield Deployment(
            base,
            {r: f"http://127.0.0.1:{p}" for r, p in ports.items()},
            processes,
            store_url,
            idp.access_token(user="alice", resource=f"{base}/mcp"),
            nextcloud,
            postgres,
        )


@asynccontextmanager
async def client_at(base: str, bearer: str, **kwargs: Any) -> AsyncIterator[Client]:
    """The official SDK client pinned to 2026-07-28, as alice, talking to `base`."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=60) as http,
        Client(
            streamable_http_client(f"{base}/mcp", http_client=http), mode="2026-07-28", **kwargs
        ) as client,
    ):
        yield client


def token_requests(nextcloud: Nextcloud) -> int:
    """Requests to Nextcloud's OAuth2 token endpoint so far (its nginx access log)."""
    assert nextcloud.instance is not None
    log = Path(nextcloud.instance.config["logs"]["nginx_access"])
    return sum(TOKEN_PATH in line for line in log.read_text(errors="replace").splitlines())
