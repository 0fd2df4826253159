"""The `replicas` profile: two servers sharing one store behind the shipped nginx site, checked
with Debian's nginx."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.deploy.files import (
    COMPOSE_FILE,
    ROOT,
    default_mcp_port,
    environment,
    mounts,
    published_ports,
    run_settings,
    services,
)
from tests.test_env_example import documented_variables

# ------------------------------------------------------------------ the `replicas` profile

REPLICAS = ("mcp-a", "mcp-b")
NGINX_SITE = ROOT / "deploy/nginx/nextcloud-mcp.conf"


def test_the_replicas_are_configurations_the_server_accepts_sharing_one_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loaded = [run_settings(name, monkeypatch, tmp_path) for name in REPLICAS]
    for name, settings in zip(REPLICAS, loaded, strict=True):
        assert settings.problems_for_oauth() == [], name
        assert set(environment(name)) <= documented_variables(), name
        assert settings.store_url is not None, f"{name} must use the shared PostgreSQL store"
        host = urlsplit(settings.store_url.get_secret_value()).hostname
        assert host in services(), name
        assert "replicas" in services()[host]["profiles"], name
    assert len({s.store_url.get_secret_value() for s in loaded if s.store_url}) == 1
    assert len({s.replica_id for s in loaded}) == len(REPLICAS), "each replica needs its own REPLICA_ID"
    # Consent links and token audiences name the proxy: one public URL for all replicas.
    assert len({s.mcp_public_url for s in loaded}) == 1


def test_the_proxy_routes_each_replica_id_to_its_service_and_publishes_the_public_url() -> None:
    site = NGINX_SITE.read_text()
    port = default_mcp_port()
    for name in REPLICAS:
        replica_id = environment(name)["REPLICA_ID"]
        upstream = f"nextcloud_mcp_{replica_id}"
        assert f'"~^{replica_id}-"         {upstream};' in site, f"no map line for {name}"
        block = re.search(r"upstream " + upstream + r" \{(.*?)\}", site, flags=re.S)
        assert block is not None, upstream
        first, *others = re.findall(r"server (\S+?)[ ;]", block.group(1))
        assert first == f"{name}:{port}", f"{upstream} should prefer {name}"
        assert others, f"{upstream} needs a backup for when {name} is down"
    proxy = services()["proxy"]
    assert "replicas" in proxy["profiles"]
    [mount] = [m for m in mounts("proxy") if m.is_bind]
    assert (COMPOSE_FILE.parent / mount.source).resolve() == NGINX_SITE
    assert mount.read_only
    listen = re.search(r"listen (\d+);", site)
    assert listen is not None
    [published] = published_ports("proxy")
    assert published.target == int(listen.group(1))
    public = urlsplit(environment("mcp-a")["MCP_PUBLIC_URL"])
    assert public.port == int(published.published)


def test_the_shipped_nginx_site_is_valid_for_nginx(tmp_path: Path) -> None:
    """`nginx -t` (Debian's nginx) on the site, with the replicas' names resolvable here."""
    site = NGINX_SITE.read_text()
    for name in REPLICAS:
        site = site.replace(f"{name}:", "127.0.0.1:")
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"error_log {tmp_path}/error.log; pid {tmp_path}/nginx.pid; events {{}}\n"
        f"http {{ access_log off; client_body_temp_path {tmp_path}/body; proxy_temp_path {tmp_path}/proxy; "
        f"include {tmp_path}/site.conf; }}\n"
    )
    result = subprocess.run(
        ["/usr/sbin/nginx", "-t", "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
