"""A real nginx (Debian's package) in front of test servers, with the shipped configuration
(deploy/nginx/nextcloud-mcp.conf) whose replica addresses and listen port are swapped for the
test's. Its own prefix in a temp dir: config, pid, logs and temp paths; no daemon."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.processes import free_port

__all__ = ["SHIPPED_CONFIG", "running_nginx"]

SHIPPED_CONFIG = Path(__file__).resolve().parents[1] / "deploy/nginx/nextcloud-mcp.conf"
NGINX = "/usr/sbin/nginx"

MAIN = """
worker_processes 1;
error_log {prefix}/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/tmp/body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;
    include {prefix}/nextcloud-mcp.conf;
}}
"""


@contextmanager
def running_nginx(replicas: Mapping[str, str], port: int = 0, timeout: float = 30.0) -> Iterator[str]:
    """nginx on `port` (0: a free one) routing to `replicas` (shipped name such as `mcp-a:8000` ->
    `127.0.0.1:port`); yields its base URL. Start it once the replicas answer: a replica refused
    at start is left alone for a while (max_fails)."""
    prefix = Path(tempfile.mkdtemp(prefix="mcp-nginx-"))
    (prefix / "tmp").mkdir()
    port = port or free_port()
    site = SHIPPED_CONFIG.read_text().replace("listen 8080;", f"listen 127.0.0.1:{port};")
    for shipped, actual in replicas.items():
        assert shipped in site, shipped
        site = site.replace(shipped, actual)
    (prefix / "nextcloud-mcp.conf").write_text(site)
    (prefix / "nginx.conf").write_text(MAIN.format(prefix=prefix))
    if os.geteuid() == 0:  # the workers run as nobody: their temp paths must be theirs
        for path in [prefix / "tmp", *prefix.iterdir()]:
            shutil.chown(path, "nobody")
    command = [NGINX, "-c", str(prefix / "nginx.conf"), "-p", str(prefix), "-g", "daemon off;"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                httpx.get(f"{base}/nginx-ready", timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None:
                    errors = process.stderr.read() if process.stderr else ""
                    raise RuntimeError(f"nginx exited with {process.returncode}: {errors}") from None
                if time.monotonic() > deadline:
                    raise TimeoutError("nginx did not answer") from None
                time.sleep(0.05)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stderr:
            process.stderr.close()
        shutil.rmtree(prefix, ignore_errors=True)
