"""Command line: `nextcloud-mcp-bridge run | check | tools | keys | --version`.

Start-up work is imported lazily, per command: `--help` and configuration errors answer at once,
and `run --transport stdio` does not import the HTTP stack.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from nextcloud_mcp_server import __version__
from nextcloud_mcp_server.config import ConfigError, Settings, load_settings
from nextcloud_mcp_server.config.validity import validate

if TYPE_CHECKING:
    from nextcloud_mcp_server.runtime import Runtime

__all__ = ["main"]

PROG = "nextcloud-mcp-bridge"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="MCP server for Nextcloud notes, calendar and files. "
        "Configuration comes from the environment (and ./.env); see .env.example.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser("run", help="serve MCP over stdio (default) or streamable HTTP")
    run.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    run.add_argument("--host", help="HTTP bind address (default: MCP_HOST or 127.0.0.1)")
    run.add_argument("--port", type=int, help="HTTP port (default: MCP_PORT or 8000)")
    run.add_argument(
        "--allow-remote",
        action="store_true",
        help="single-user mode only: allow a non-loopback HTTP bind (anyone who reaches it acts as you)",
    )
    run.add_argument(
        "--serve-config-errors",
        action="store_true",
        help="stdio only: with settings that cannot work, still answer the MCP client and explain them "
        "there (the Claude Desktop extension: an exit shows only 'Server disconnected')",
    )

    commands.add_parser("check", help="verify the configuration against the Nextcloud and report")
    commands.add_parser("tools", help="list the tools with their scopes (Markdown)")
    keys = commands.add_parser("keys", help="encryption keys of the offline-access store")
    keys.add_argument(
        "action",
        choices=("generate", "rotate", "rotate-signing"),
        help="generate: print a new key; rotate: re-encrypt the store under the first configured key; "
        "rotate-signing: a new token signing key now (AUTH_SERVER_ENABLED)",
    )
    return parser


def _fail(lines: Sequence[str], code: int = 2) -> int:
    for line in lines:
        print(f"{PROG}: {line}", file=sys.stderr)
    return code


def _settings() -> Settings:
    return load_settings()


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command == "tools":
        from nextcloud_mcp_server.tools import all_tools
        from nextcloud_mcp_server.tools.catalog import markdown_table

        print(markdown_table(all_tools()))
        return 0
    if args.command == "keys" and args.action == "generate":
        from nextcloud_mcp_server.storage.crypto import generate_key

        print(generate_key())
        # stdout stays the bare key (for `>> .env` or a secrets manager); the hint goes to stderr
        print(
            "Put it in TOKEN_ENCRYPTION_KEY (the environment, .env, or a file named by "
            "TOKEN_ENCRYPTION_KEY_FILE). To rotate, put it first and keep the old key after a comma: "
            f"TOKEN_ENCRYPTION_KEY=<new>,<old>, then run `{PROG} keys rotate`.",
            file=sys.stderr,
        )
        return 0
    try:
        settings = _settings()
        if args.command == "keys" and args.action == "rotate-signing":
            return _rotate_signing(settings)
        if args.command == "keys":
            return _rotate(settings)
        if args.command == "check":
            return _check(settings)
        return _run(settings, args)
    except ConfigError as exc:
        if args.command == "run" and args.serve_config_errors and args.transport == "stdio":
            return _serve_problems(exc.problems)
        return _fail(exc.problems)
    except KeyboardInterrupt:
        return 130


def _rotate(settings: Settings) -> int:
    """Re-encrypt every stored secret under the first configured key."""
    from nextcloud_mcp_server.authz.db import reseal
    from nextcloud_mcp_server.storage.backends import make_store
    from nextcloud_mcp_server.storage.crypto import Cipher, InvalidKey
    from nextcloud_mcp_server.storage.store import StoreError

    try:
        cipher = Cipher(settings.encryption_keys())
    except InvalidKey as exc:
        return _fail([f"TOKEN_ENCRYPTION_KEY is not usable: {exc}"])

    store = make_store(settings, cipher)

    async def rotate() -> tuple[int, list[str], int]:
        from nextcloud_mcp_server.authz.service import open_connection

        await store.open()
        try:
            count = await store.rotate_keys()
            # the authorization server's sealed keys and clients (tables made if missing)
            count += await reseal(await open_connection(store), cipher)
            return count, store.unreadable_grants, store.dropped_states
        finally:
            await store.close()

    try:
        count, unreadable, dropped = asyncio.run(rotate())
    except StoreError as exc:
        return _fail([str(exc)])
    print(f"re-encrypted {count} secret(s) under key {cipher.current_key_id} in {store}")
    if dropped:
        print(f"dropped {dropped} unfinished sign-in(s) whose key is no longer configured")
    if unreadable:
        print(
            f"{len(unreadable)} grant(s) could not be read ({', '.join(unreadable)}): left as they are; "
            "those users disconnect (revoke_nextcloud_access) or connect again"
        )
    return 0


def _rotate_signing(settings: Settings) -> int:
    """Sign new tokens with a new key from now on; the old public key stays published until the
    tokens it signed have expired. A running server reads it at its next housekeeping (a minute)."""
    from nextcloud_mcp_server.runtime import Runtime
    from nextcloud_mcp_server.tools import tool_scopes

    if not settings.auth_server_enabled:
        return _fail(["keys rotate-signing needs AUTH_SERVER_ENABLED=true"])
    problems = settings.problems_for_oauth()
    if problems:
        return _fail(problems)
    runtime = Runtime(settings, scopes=tool_scopes(settings))

    async def rotate() -> str:
        async with runtime:
            assert runtime.auth_server is not None
            return await runtime.auth_server.keys.rotate()

    kid = asyncio.run(rotate())
    print(f"new signing key {kid} in {settings.store_path}; running servers sign with it within a minute")
    return 0


async def _open_store(runtime: Runtime) -> None:
    """Open and close the store once, so a key that does not fit fails before serving."""
    assert runtime.store is not None
    await runtime.store.open()
    await runtime.store.close()


def _check(settings: Settings) -> int:
    validate(settings)  # what `run` refuses, in its words (docs/ADR/0066)
    from nextcloud_mcp_server.diagnostics import format_report, run_checks

    results = asyncio.run(run_checks(settings))
    print(format_report(settings, results))
    return 1 if any(r.status == "fail" for r in results) else 0


def _run(settings: Settings, args: argparse.Namespace) -> int:
    from nextcloud_mcp_server.logs import configure_logging
    from nextcloud_mcp_server.runtime import Runtime
    from nextcloud_mcp_server.tools import tool_scopes

    validate(settings)  # what `check` refuses, in its words (docs/ADR/0066)
    configure_logging(settings.log_level, settings.secrets())
    runtime = Runtime(settings, scopes=tool_scopes(settings))  # ConfigError: credentials missing
    if args.transport == "stdio" and settings.oauth_enabled:
        return _fail(["OAuth mode (OIDC_ISSUER is set) needs bearer tokens: use --transport http"])
    if runtime.store is not None:
        from nextcloud_mcp_server.storage.store import StoreError

        try:
            asyncio.run(_open_store(runtime))
        except StoreError as exc:
            return _fail([str(exc)])
    if args.transport == "stdio":
        asyncio.run(_serve_stdio(settings, runtime))
        return 0

    host = args.host or settings.mcp_host
    port = settings.mcp_port if args.port is None else args.port
    from nextcloud_mcp_server.app import create_app, is_loopback

    if not is_loopback(host):
        if not args.allow_remote and not settings.oauth_enabled:
            return _fail(
                [
                    f"refusing to bind {host}: in single-user mode anyone who reaches the server acts "
                    "as NEXTCLOUD_USERNAME. Bind 127.0.0.1, or pass --allow-remote behind an "
                    "authenticating proxy"
                ]
            )
        if not settings.allowed_hosts:
            return _fail(
                [
                    "MCP_ALLOWED_HOSTS is required for a non-loopback bind: the host names clients "
                    "use to reach this server (DNS-rebinding protection)"
                ]
            )
    import uvicorn

    from nextcloud_mcp_server.web.front import uvicorn_options

    app = create_app(settings.model_copy(update={"mcp_host": host}), runtime=runtime)
    _settle_heap()
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        lifespan="on",
        server_header=False,
        **uvicorn_options(settings),
    )
    uvicorn.Server(config).run()
    return 0


async def _serve_stdio(settings: Settings, runtime: Runtime) -> None:
    from nextcloud_mcp_server.runtime.warm_up import WarmUp, after_handshake, modules_for
    from nextcloud_mcp_server.server import build_listed, build_server
    from nextcloud_mcp_server.tools import chosen_toolsets

    server = build_server(settings, runtime)
    _settle_heap()
    if sys.stdin.isatty():  # a person in a terminal (`make run`), not an MCP client
        print(
            f"nextcloud-mcp-bridge {__version__}: serving {settings.nextcloud_host} as "
            f"'{settings.nextcloud_username}' over stdio. It waits for an MCP client (Claude Desktop, "
            "an IDE, the MCP Inspector) that starts it and speaks JSON-RPC on stdin; typed here, "
            'nothing happens. `make check` tests the configuration; `make run ARGS="--transport '
            'http"` serves http://127.0.0.1:8000/mcp instead. Ctrl-C or Ctrl-D stops it.',
            file=sys.stderr,
            flush=True,
        )
    runtime.startup_check.at_first_call = True
    # what the first call would import and ask, done once the handshake is over (docs/ADR/0090)
    # and the listed tools, built (docs/ADR/0093)
    warm = WarmUp(
        modules_for(chosen_toolsets(settings)),
        check=runtime.startup_check.first_call,
        build=functools.partial(build_listed, server),
    )
    server.middleware.append(after_handshake(warm))
    async with runtime:
        try:
            await server.run_stdio_async()
        finally:
            await warm.aclose()


def _serve_problems(problems: Sequence[str]) -> int:
    """Settings that cannot work, explained to the MCP client that started us: `initialize`
    answers, its instructions and the one tool say what is wrong and where to fix it (an exit
    would show only "Server disconnected"; docs/ADR/0066). The log gets the same lines."""
    _fail(problems)
    from nextcloud_mcp_server.server import build_explaining_server

    asyncio.run(build_explaining_server(problems).run_stdio_async())
    return 0


def _settle_heap() -> None:
    """Take what startup made (modules, schemas, validators: about 100,000 objects) out of the
    garbage collector's sight. They live as long as the process; without this every full
    collection walks them all again (60 ms each, measured while serving tools/call). No
    collection first: it would add 50 ms to every cold start to free about 200 objects."""
    gc.freeze()
