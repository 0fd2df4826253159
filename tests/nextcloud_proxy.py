"""A real Nextcloud under a sub-path behind a reverse proxy, as many people run it
(`https://example.com/nextcloud/`): Debian's nginx in front of the kit's instance maps
`/nextcloud/` to it, and Nextcloud is told its web root and host (`overwritewebroot`,
`overwritehost`), so the URLs, redirects and DAV hrefs it writes carry `/nextcloud` and the
proxy's address. nginx leaves those redirects alone (`proxy_redirect off`): its default rewrite
would put a second `/nextcloud` in front of Nextcloud's own.

The setting goes into a config file of its own beside `config.php` (Nextcloud merges every
`*.config.php`): php-fpm reads a new file at once, where a changed `config.php` may be served from
its opcache for a minute. The file is removed afterwards (`reset` does not touch it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.nginx import NGINX
from tests.processes import free_port
from tests.real_nextcloud import Instance

__all__ = ["behind_a_subpath"]

SUBPATH = "/nextcloud"

_CONF = """
worker_processes 1;
error_log {prefix}/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/tmp/body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;
    server {{
        listen 127.0.0.1:{port};
        location = /nginx-ready {{ return 204; }}
        location = /.well-known/caldav {{ return 301 {subpath}/remote.php/dav/; }}
        location = /.well-known/carddav {{ return 301 {subpath}/remote.php/dav/; }}
        location {subpath}/ {{
            proxy_pass {upstream}/;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-Prefix {subpath};
            proxy_redirect off;
            client_max_body_size 512M;
            proxy_request_buffering off;
            proxy_buffering off;
        }}
    }}
}}
"""


@contextmanager
def behind_a_subpath(instance: Instance, timeout: float = 30.0) -> Iterator[str]:
    """The instance at `http://127.0.0.1:<port>/nextcloud`; yields that URL."""
    port = free_port()
    outside = f"http://127.0.0.1:{port}{SUBPATH}"
    settings = instance.dir / "server" / "config" / "zz-subpath.config.php"
    settings.write_text(
        "<?php\n$CONFIG = [\n"
        f"  'overwritewebroot' => '{SUBPATH}',\n"
        f"  'overwritehost' => '127.0.0.1:{port}',\n"
        f"  'overwrite.cli.url' => '{outside}',\n"
        "];\n"
    )
    shutil.chown(settings, "www-data", "www-data")
    prefix = Path(tempfile.mkdtemp(prefix="nc-subpath-"))
    (prefix / "tmp").mkdir()
    upstream = f"{urlsplit(instance.url).scheme}://{urlsplit(instance.url).netloc}"
    (prefix / "nginx.conf").write_text(
        _CONF.format(prefix=prefix, port=port, subpath=SUBPATH, upstream=upstream)
    )
    if os.geteuid() == 0:  # the workers run as nobody: their temp paths must be theirs
        for path in [prefix / "tmp", *prefix.iterdir()]:
            shutil.chown(path, "nobody")
    command = [NGINX, "-c", str(prefix / "nginx.conf"), "-p", str(prefix), "-g", "daemon off;"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/nginx-ready", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "nginx did not answer"
                time.sleep(0.05)
        yield outside
    finally:
        settings.unlink(missing_ok=True)
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stderr:
            process.stderr.close()
        shutil.rmtree(prefix, ignore_errors=True)
