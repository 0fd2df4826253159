"""Run the Nextcloud double on its own (benchmarks, `make demo`).

    python -m tests.nextcloud_double --data DIR [--port 0] [--user NAME:LOGIN_PW:APP_PW ...]
                                     [--idp-issuer URL]

Prints one JSON line, {"ready": true, "url": "http://127.0.0.1:<port>"}, then serves until
SIGTERM/SIGINT. `bench/_double.py` runs the same with a meter wrapped around the double (`wrap`).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import uvicorn

from tests.nextcloud_double import Account, NextcloudDouble
from tests.nextcloud_double.tokens import idp_jwt_validator


def main(argv: Sequence[str] | None = None, *, wrap: Callable[[Any], Any] = lambda app: app) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.nextcloud_double", description=__doc__)
    parser.add_argument("--data", type=Path, required=True, help="folder for the double's files")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--user", action="append", default=[], help="NAME:LOGIN_PASSWORD:APP_PASSWORD")
    parser.add_argument("--idp-issuer", help="accept Bearer JWTs from this OpenID provider")
    args = parser.parse_args(argv)
    users = args.user or ["admin:admin-login-password:admin-app-password"]
    accounts = []
    for spec in users:
        name, login, app = [*spec.split(":", 2), "", ""][:3]
        accounts.append(
            Account(
                name,
                login or f"{name}-login",
                display_name=name.title(),
                app_passwords={app} if app else set(),
            )
        )
    double = NextcloudDouble(args.data, accounts)
    if args.idp_issuer:
        double.accounts.add_bearer_validator(idp_jwt_validator(args.idp_issuer))
    # IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets created with it; without, each
    # keep-alive answer waits ~40 ms for the client's delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(2048)  # before "ready": a client may connect before uvicorn's loop has started
    print(json.dumps({"ready": True, "url": f"http://127.0.0.1:{sock.getsockname()[1]}"}), flush=True)
    # asyncio and h11 whatever else is installed: the benchmarks' floor stays the one measured before
    # the server moved to uvloop and httptools (ADR 0028).
    config = uvicorn.Config(
        wrap(double),
        loop="asyncio",
        http="h11",
        lifespan="off",
        log_level="warning",
        access_log=False,
        log_config=None,
    )
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
