"""The TypeScript SDK's MCP client (1.32.2, what most MCP hosts are built on) as a test peer.

One Node process (`tests/idp/mcp_session.mjs`) per test module holds any number of client
sessions; each request is one JSON line in, one JSON line out. Unlike the Python SDK's client, it
checks the structured content of every result, error or not, against the tool's output schema
(Ajv), and throws -32602 when it does not match: a reply with `error` is what its host would see.

    with typescript_client() as ts:
        ts.open("asker", mcp_url, human="decline")
        reply = ts.call("asker", "nc_notes_delete_note", {"note_id": 1})
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any, Literal

from tests.oidc import IDP_DIR, NODE

__all__ = ["TypeScriptClient", "typescript_client"]

REPLY_SECONDS = 60.0  # a deadline for one request (tool calls against the real Nextcloud included)


class TypeScriptClient:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        self._process, self._stdin = process, process.stdin
        self._ids = itertools.count(1)
        self._replies: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []
        self._readers = [
            threading.Thread(target=_drain, args=(stream, sink), daemon=True)
            for stream, sink in ((process.stdout, self._replies.put), (process.stderr, self._keep_stderr))
        ]
        for reader in self._readers:
            reader.start()

    def _keep_stderr(self, line: str | None) -> None:
        if line is not None:
            self._stderr.append(line)

    def request(self, op: str, **params: Any) -> dict[str, Any]:
        """Send one request and wait (at most REPLY_SECONDS) for its reply."""
        sent = next(self._ids)
        self._stdin.write(json.dumps({"id": sent, "op": op, **params}) + "\n")
        self._stdin.flush()
        try:
            line = self._replies.get(timeout=REPLY_SECONDS)
        except queue.Empty:
            raise AssertionError(f"no answer to {op} within {REPLY_SECONDS} s: {self.stderr()}") from None
        assert line is not None, f"the TypeScript client exited: {self.stderr()}"
        reply: dict[str, Any] = json.loads(line)
        assert reply.get("id") == sent, reply
        assert "failure" not in reply, reply["failure"]
        return reply

    def open(
        self,
        name: str,
        url: str,
        *,
        human: Literal["accept", "decline", "cancel"] | None = None,
        headers: dict[str, str] | None = None,
    ) -> list[str]:
        """A session named `name` (form elicitation answered as `human`, or none); its tools."""
        tools: list[str] = self.request("open", name=name, url=url, human=human, headers=headers)["tools"]
        return tools

    def call(self, name: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`{"result": ..., "asked": [...]}`, or `{"error": {"code", "message"}, "asked": [...]}`."""
        return self.request("call", name=name, tool=tool, arguments=arguments)

    def list(self, name: str) -> tuple[list[str], int]:
        """The session's tools listed again, and how many `tools/list_changed` it was told of."""
        reply = self.request("list", name=name)
        return reply["tools"], reply["changed"]

    def prompts(self, name: str) -> dict[str, Any]:
        """prompts/list: {"prompts": [...], "capabilities": the server's}."""
        return self.request("prompts", name=name)

    def prompt(self, name: str, prompt: str, arguments: dict[str, str]) -> dict[str, Any]:
        """prompts/get: {"result": GetPromptResult} or {"error": {...}}."""
        return self.request("prompt", name=name, prompt=prompt, arguments=arguments)

    def close(self, name: str) -> None:
        self.request("close", name=name)

    def stderr(self) -> str:
        return "".join(self._stderr)[-4000:]

    def stop(self) -> None:
        """End the process (stdin closed: it closes its sessions and exits; killed if it lingers)."""
        process = self._process
        self._stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        for reader in self._readers:
            reader.join(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _drain(stream: IO[str], sink: Any) -> None:
    """Every line of `stream` to `sink`, then None (the process has gone)."""
    for line in stream:
        sink(line)
    sink(None)


@contextmanager
def typescript_client() -> Iterator[TypeScriptClient]:
    """The Node process, stopped on exit."""
    if not NODE.exists():
        raise RuntimeError(f"{NODE} is missing: run `make test` (it runs npm ci in tests/idp)")
    process = subprocess.Popen(
        [str(NODE), str(IDP_DIR / "mcp_session.mjs")],
        cwd=IDP_DIR,
        env={"PATH": os.environ.get("PATH", "")},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    client = TypeScriptClient(process)
    try:
        yield client
    finally:
        client.stop()
