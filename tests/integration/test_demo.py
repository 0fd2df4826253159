"""`make demo`: the demo program starts the double and the server, prints working client
configuration, and stops cleanly on Ctrl-C."""

from __future__ import annotations

import datetime as dt
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.mcp_clients import http_session, structured
from tests.processes import free_port

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
DEADLINE = 30.0


@dataclass
class Demo:
    process: subprocess.Popen[str]
    stderr: Path
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    seen: list[str] = field(default_factory=list)

    def read_until(self, wanted: str, timeout: float = DEADLINE) -> list[str]:
        """Lines of stdout up to and including the first one starting with `wanted`."""
        deadline = time.monotonic() + timeout
        start = len(self.seen)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"no {wanted!r} line within {timeout} s; stdout: {self.seen}")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                self.process.wait(5)
                pytest.fail(
                    f"the demo exited ({self.process.returncode}) before {wanted!r}; "
                    f"stdout: {self.seen}; stderr: {self.stderr.read_text()}"
                )
            self.seen.append(line)
            if line.startswith(wanted):
                return self.seen[start:]


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


def demo_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """Only PATH, and a state folder of this test's own (never the user's ~/.local/state)."""
    return {"PATH": os.environ.get("PATH", os.defpath), "XDG_STATE_HOME": str(tmp_path / "state"), **extra}


def banner_value(lines: list[str], label: str) -> str:
    [line] = [line for line in lines if line.strip().startswith(label)]
    return line.split(label, 1)[1].strip()


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    port = free_port()
    stderr_path = tmp_path / "demo-stderr.log"
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.demo", "--port", str(port)],
            cwd=REPO,
            env=demo_env(tmp_path),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    assert process.stdout is not None
    running = Demo(process, stderr_path)
    reader = threading.Thread(target=_pump, args=(process.stdout, running.lines), daemon=True)
    reader.start()
    try:
        yield running
    finally:
        if process.poll() is None:  # a failed test: SIGTERM, so the demo stops its server too
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        reader.join(10)
        process.stdout.close()


def _json_after(lines: list[str], heading: str) -> dict[str, Any]:
    """The JSON document printed on the lines after `heading`."""
    start = next(i for i, line in enumerate(lines) if line.startswith(heading)) + 1
    text = "\n".join(lines[start:])
    document, _ = json.JSONDecoder().raw_decode(text[text.index("{") :])
    assert isinstance(document, dict)
    return document


async def test_the_demo_serves_seeded_data_and_stops_on_ctrl_c(demo: Demo, tmp_path: Path) -> None:
    printed = demo.read_until("Press Ctrl-C to stop.")
    assert printed[:3] == ["", "Nextcloud MCP server demo", "========================="]
    mcp_url = banner_value(printed, "MCP endpoint (streamable HTTP):")
    nextcloud_url = banner_value(printed, "Nextcloud (double):")
    assert mcp_url.startswith("http://127.0.0.1:")
    assert mcp_url.endswith("/mcp")
    assert nextcloud_url.startswith("http://127.0.0.1:")

    today = dt.datetime.now(dt.UTC).date()
    monday = today - dt.timedelta(days=today.weekday())
    async with http_session(mcp_url) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"nc_notes_list_notes", "nc_calendar_list_events", "nc_webdav_list_directory"} <= tools

        notes = structured(await session.call_tool("nc_notes_list_notes", {}))
        assert notes["total"] == 3
        assert sorted((n["category"], n["title"]) for n in notes["notes"]) == [
            ("Personal", "Shopping list"),
            ("Work", "Meeting notes"),
            ("Work", "Project kickoff"),
        ]

        week = {"start": monday.isoformat(), "end": (monday + dt.timedelta(days=7)).isoformat()}
        events = structured(await session.call_tool("nc_calendar_list_events", week))
        assert sorted(e["summary"] for e in events["events"]) == [
            "Dentist appointment",
            "Project kickoff meeting",
        ]
        assert {e["calendar"] for e in events["events"]} == {"personal"}

        todos = structured(await session.call_tool("nc_calendar_list_todos", {}))
        assert [t["summary"] for t in todos["todos"]] == ["Send the quarterly report"]

        root = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/"}))
        assert {"Documents", "Projects", "Notes"} <= {e["name"] for e in root["entries"]}
        documents = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/Documents"}))
        assert [(e["name"], e["type"]) for e in documents["entries"]] == [
            ("Budget 2026.csv", "file"),
            ("Welcome.md", "file"),
        ]

    desktop = _json_after(printed, "Claude Desktop")["mcpServers"]["nextcloud-demo"]
    assert Path(desktop["command"]).is_absolute()
    assert Path(desktop["command"]).exists()
    assert desktop["args"] == ["run"]
    password = desktop["env"]["NEXTCLOUD_PASSWORD"]
    assert desktop["env"] == {
        "NEXTCLOUD_HOST": nextcloud_url,
        "NEXTCLOUD_USERNAME": "demo",
        "NEXTCLOUD_PASSWORD": password,
    }
    assert len(password) >= 20
    # Pasted into Claude Desktop, the entry starts a working stdio server against the double.
    params = StdioServerParameters(
        command=desktop["command"], args=desktop["args"], env=desktop["env"], cwd=tmp_path
    )
    with (tmp_path / "desktop-stderr.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as desktop_session,
        ):
            await desktop_session.initialize()
            listed = structured(await desktop_session.call_tool("nc_notes_list_notes", {}))
    assert listed["total"] == 3

    generic = _json_after(printed, "Any streamable-HTTP")
    assert generic == {"mcpServers": {"nextcloud-demo": {"url": mcp_url}}}

    demo.process.send_signal(signal.SIGINT)
    assert demo.process.wait(15) == 0
    demo.read_until("Stopped")
    # The app password is shown to the user, never logged (by the demo, its server, or the stdio one).
    assert password not in demo.stderr.read_text()
    assert password not in (tmp_path / "desktop-stderr.log").read_text()
    # Nothing but the banner: no server log lines (uvicorn's INFO included) on either stream.
    assert demo.stderr.read_text() == ""


def _once(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.demo", "--once", *args],
        cwd=REPO,
        env=demo_env(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_restart_prints_the_same_claude_desktop_configuration(tmp_path: Path) -> None:
    """Port and app password of the stand-in Nextcloud are kept in the state folder (mode 0600),
    so a pasted configuration keeps working; the banner is the only output."""
    port = str(free_port())
    first, second = _once(tmp_path, "--port", port), _once(tmp_path, "--port", port)
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    desktop = [
        _json_after(r.stdout.splitlines(), "Claude Desktop")["mcpServers"]["nextcloud-demo"]
        for r in (first, second)
    ]
    assert desktop[0] == desktop[1]
    assert "new: paste it again" in first.stdout
    assert "unchanged since the last run" in second.stdout
    for result in (first, second):
        assert result.stdout.splitlines()[1] == "Nextcloud MCP server demo"
        assert "INFO" not in result.stdout + result.stderr
        assert result.stderr == ""
    state = tmp_path / "state" / "nextcloud-mcp-demo" / "demo.json"
    assert state.stat().st_mode & 0o777 == 0o600
    assert json.loads(state.read_text())["app_password"] == desktop[0]["env"]["NEXTCLOUD_PASSWORD"]


def test_a_taken_double_port_gets_a_new_one_and_says_so(tmp_path: Path) -> None:
    """If another program took the remembered port, the demo picks another and says the
    configuration is new."""
    first = _once(tmp_path, "--port", str(free_port()))
    assert first.returncode == 0, first.stderr
    old = _json_after(first.stdout.splitlines(), "Claude Desktop")["mcpServers"]["nextcloud-demo"]
    old_port = int(old["env"]["NEXTCLOUD_HOST"].rsplit(":", 1)[1])
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", old_port))
        busy.listen()
        second = _once(tmp_path, "--port", str(free_port()))
    assert second.returncode == 0, second.stderr
    new = _json_after(second.stdout.splitlines(), "Claude Desktop")["mcpServers"]["nextcloud-demo"]
    assert new["env"]["NEXTCLOUD_HOST"] != old["env"]["NEXTCLOUD_HOST"]
    assert new["env"]["NEXTCLOUD_PASSWORD"] == old["env"]["NEXTCLOUD_PASSWORD"]
    assert "new: paste it again" in second.stdout


def test_the_stand_in_nextcloud_takes_the_port_it_is_given(tmp_path: Path) -> None:
    """`--nextcloud-port N` puts the stand-in Nextcloud on N (the configuration printed says so);
    a taken one is refused in one line."""
    wanted = free_port()
    done = _once(tmp_path, "--port", str(free_port()), "--nextcloud-port", str(wanted))
    assert done.returncode == 0, done.stderr
    desktop = _json_after(done.stdout.splitlines(), "Claude Desktop")["mcpServers"]["nextcloud-demo"]
    assert desktop["env"]["NEXTCLOUD_HOST"] == f"http://127.0.0.1:{wanted}"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        refused = _once(tmp_path, "--port", str(free_port()), "--nextcloud-port", str(taken))
    assert refused.returncode == 1
    [line] = refused.stderr.splitlines()
    assert f"port {taken} on 127.0.0.1 (--nextcloud-port) is already in use" in line


def test_a_taken_port_through_make_names_make_demo_args(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _once(tmp_path, "--port", str(port), NEXTCLOUD_MCP_DEMO_VIA_MAKE="1")
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert f'choose another with make demo ARGS="--port {port + 100}"' in line


def test_a_taken_port_is_reported_in_one_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "tests.demo", "--port", str(port), "--once"],
            cwd=REPO,
            env={"PATH": os.environ.get("PATH", os.defpath), "XDG_STATE_HOME": "/nonexistent"},
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 1
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert f"port {port}" in line
    assert "--port" in line
