"""`make demo`: try the MCP server without a Nextcloud.

    python -m tests.demo [--port 8000] [--nextcloud-port N] [--data DIR] [--state DIR] [--once] [--verbose]

Starts the Nextcloud double (real WsgiDAV and Radicale behind a Nextcloud-shaped front door) on a
loopback port, seeds it with a few notes, events, a task and files for the user `demo`, starts
this MCP server over streamable HTTP against it, and prints the MCP URL and ready-to-paste client
configurations - nothing else (the server logs only warnings unless --verbose).

The double's port and the demo user's app password are kept in <state>/demo.json (default
$XDG_STATE_HOME/nextcloud-mcp-demo, else ~/.local/state/nextcloud-mcp-demo), so a configuration
pasted into Claude Desktop keeps working after a restart.

Runs until Ctrl-C or SIGTERM (with --once: exits as soon as everything is up), then stops the
server and the double and removes the temporary data (data kept with --data).
"""

from __future__ import annotations

import argparse
import datetime as dt
import errno
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from types import FrameType

import httpx

from tests.demo_data import USERNAME, DemoError, seed
from tests.nextcloud_double import Account, NextcloudDouble
from tests.nextcloud_double.server import serve_in_thread
from tests.processes import free_port, wait_for_http

__all__ = ["main"]

PROG = "python -m tests.demo"
VIA_MAKE = "NEXTCLOUD_MCP_DEMO_VIA_MAKE"  # set by `make demo`: messages then speak of ARGS="..."
REPO = Path(__file__).resolve().parents[1]
STARTUP_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000, help="port of the MCP server (default 8000)")
    parser.add_argument(
        "--nextcloud-port",
        type=int,
        help="port of the stand-in Nextcloud (default: the one of the last run, or a free one)",
    )
    parser.add_argument(
        "--data", type=Path, help="keep the double's data in this folder (default: a temp folder, removed)"
    )
    parser.add_argument(
        "--state",
        type=Path,
        help="where the double's port and the demo password are kept between runs "
        "(default $XDG_STATE_HOME/nextcloud-mcp-demo or ~/.local/state/nextcloud-mcp-demo)",
    )
    parser.add_argument("--once", action="store_true", help="exit as soon as everything is up (for tests)")
    parser.add_argument("--verbose", action="store_true", help="let the MCP server log at INFO")
    return parser


def _how_to_pass(option: str) -> str:
    """`--port 8100`, or `make demo ARGS="--port 8100"` when run through make."""
    return f'make demo ARGS="{option}"' if os.environ.get(VIA_MAKE) else option


def _port_free(port: int) -> bool:
    """SO_REUSEADDR as uvicorn sets it, so a port in TIME_WAIT after a previous run is free."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return False
            raise DemoError(f"port {port} on 127.0.0.1 cannot be used ({exc})") from None
    return True


def _check_port_free(port: int) -> None:
    """Fail early, saying how to choose another port, when something already listens there."""
    if not _port_free(port):
        raise DemoError(
            f"port {port} on 127.0.0.1 is already in use; choose another with "
            f"{_how_to_pass('--port ' + str(port + 100 if port + 100 <= 65535 else 8100))}"
        )


def _state_dir(given: Path | None) -> Path:
    if given is not None:
        return given
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "nextcloud-mcp-demo"


def _load_state(folder: Path, wanted: int | None = None) -> tuple[int, str, str, bool]:
    """(double's port, app password, login password, whether they are the ones of a previous run).
    A port another program took meanwhile is replaced, so the printed configuration changes; a
    port asked for (`--nextcloud-port`) is used, or start-up fails saying it is taken."""
    path = folder / "demo.json"
    try:
        saved = json.loads(path.read_text())
        port, password, login = int(saved["nextcloud_port"]), str(saved["app_password"]), str(saved["login"])
        if not (1024 <= port <= 65535 and len(password) >= 20 and len(login) >= 20):
            raise ValueError("out of range")
    except (OSError, ValueError, KeyError, TypeError):
        port, password, login = 0, secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    if wanted is not None:
        if not _port_free(wanted):
            raise DemoError(f"port {wanted} on 127.0.0.1 (--nextcloud-port) is already in use")
        kept, port = port == wanted, wanted
    else:
        kept = port != 0 and _port_free(port)
        if not kept:
            port = free_port()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    state = {"nextcloud_port": port, "app_password": password, "login": login}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # holds a password
    with os.fdopen(fd, "w") as out:
        json.dump(state, out)
    return port, password, login, kept


def _desktop_command() -> tuple[str, list[str]]:
    """The venv's console script next to this interpreter (not resolved: a venv's python is a
    symlink to the base interpreter, whose folder has no such script)."""
    script = Path(sys.executable).absolute().parent / "nextcloud-mcp-bridge"
    if script.exists():
        return str(script), ["run"]
    return str(Path(sys.executable).absolute()), ["-m", "nextcloud_mcp_server", "run"]


def _banner(
    mcp_url: str, nextcloud_url: str, password: str, data: Path, kept: bool, seeded: bool, same_config: bool
) -> str:
    command, args = _desktop_command()
    desktop = {
        "mcpServers": {
            "nextcloud-demo": {
                "command": command,
                "args": args,
                "env": {
                    "NEXTCLOUD_HOST": nextcloud_url,
                    "NEXTCLOUD_USERNAME": USERNAME,
                    "NEXTCLOUD_PASSWORD": password,
                },
            }
        }
    }
    generic = {"mcpServers": {"nextcloud-demo": {"url": mcp_url}}}
    where = f"{data} (kept)" if kept else f"{data} (removed on exit)"
    about = [f'A stand-in Nextcloud for user "{USERNAME}", with the data of an earlier run.']
    if seeded:
        about = [
            f'A stand-in Nextcloud for user "{USERNAME}": 3 notes (Work, Personal), 2 events this',
            "week and a task in the Personal calendar, files in /Documents and /Projects.",
        ]
    return "\n".join(
        [
            "",
            "Nextcloud MCP server demo",
            "=========================",
            *about,
            f"  Nextcloud (double): {nextcloud_url}",
            f"  Data:               {where}",
            "",
            f"MCP endpoint (streamable HTTP): {mcp_url}",
            "",
            "Claude Desktop (claude_desktop_config.json; it starts its own server over stdio against the",
            "same stand-in Nextcloud, so keep this demo running; "
            + ("unchanged since the last run):" if same_config else "new: paste it again if you had one):"),
            json.dumps(desktop, indent=2),
            "",
            "Any streamable-HTTP MCP client:",
            json.dumps(generic, indent=2),
            f"(Claude Code: claude mcp add --transport http nextcloud-demo {mcp_url})",
            "",
            "Press Ctrl-C to stop.",
        ]
    )


def _start_server(
    port: int, nextcloud_url: str, password: str, cwd: Path, verbose: bool
) -> subprocess.Popen[str]:
    """`python -m nextcloud_mcp_server run --transport http` with only the demo's settings: the
    caller's NEXTCLOUD_*/MCP_* variables and any ./.env (cwd is the data folder) stay out."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "PYTHONPATH": str(REPO),
        "NEXTCLOUD_HOST": nextcloud_url,
        "NEXTCLOUD_USERNAME": USERNAME,
        "NEXTCLOUD_PASSWORD": password,
        "LOG_LEVEL": "INFO" if verbose else "WARNING",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "nextcloud_mcp_server", "run", "--transport", "http", "--port", str(port)],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=sys.stderr.fileno(),  # our stdout carries only the demo's own lines
        text=True,
    )


def _stop_server(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_TIMEOUT)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGINT/SIGTERM: unwind (every resource is released by the ExitStack). Further signals are
    ignored, so a second Ctrl-C cannot cut the clean-up short; every step of it has a deadline."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def run(
    port: int,
    data: Path | None,
    once: bool,
    state: Path,
    verbose: bool = False,
    nextcloud_port: int | None = None,
) -> None:
    _check_port_free(port)
    if nextcloud_port == port:
        raise DemoError(f"--nextcloud-port and --port are both {port}; choose two ports")
    nextcloud_port, password, login, kept = _load_state(state, nextcloud_port)
    with ExitStack() as stack:
        if data is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="nextcloud-mcp-demo-")))
            fresh = True
        else:
            root = data.absolute()
            root.mkdir(parents=True, exist_ok=True)
            fresh = not any(root.iterdir())
        account = Account(USERNAME, login, display_name="Demo User", app_passwords={password})
        double = NextcloudDouble(root / "nextcloud", [account])
        nextcloud_url = stack.enter_context(serve_in_thread(double, lifespan="off", port=nextcloud_port))
        if fresh:
            with httpx.Client(base_url=nextcloud_url, auth=(USERNAME, password), timeout=10) as client:
                seed(client, dt.datetime.now(dt.UTC).date())

        server = _start_server(port, nextcloud_url, password, root, verbose)
        stack.callback(_stop_server, server)
        base = f"http://127.0.0.1:{port}"
        try:
            health = wait_for_http(f"{base}/health", server, timeout=STARTUP_TIMEOUT)
        except (RuntimeError, TimeoutError) as exc:
            raise DemoError(f"the MCP server did not start: {exc}") from None
        if health.status_code != 200:
            raise DemoError(f"the MCP server's /health answered {health.status_code}")

        mcp_url = f"{base}/mcp"
        banner = _banner(
            mcp_url, nextcloud_url, password, root, kept=data is not None, seeded=fresh, same_config=kept
        )
        print(banner, flush=True)
        if not once:
            try:
                server.wait()  # until a signal (KeyboardInterrupt), or the server dies on its own
            except KeyboardInterrupt:
                print("\nStopping ...", flush=True)
            else:
                raise DemoError(f"the MCP server exited unexpectedly (exit status {server.returncode})")
    print("Stopped." if data is not None else "Stopped; temporary data removed.", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        _parser().error("--port must be between 0 and 65535")
    if args.nextcloud_port is not None and not 1024 <= args.nextcloud_port <= 65535:
        _parser().error("--nextcloud-port must be between 1024 and 65535")
    port = args.port or free_port()
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        run(port, args.data, args.once, _state_dir(args.state), args.verbose, args.nextcloud_port)
    except DemoError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # stopped while starting: everything started so far was stopped
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
