"""The double's own entry point (`python -m tests.nextcloud_double`), as benchmarks start it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_it_answers_as_soon_as_it_says_ready(tmp_path: Path) -> None:
    """The ready line comes after the socket listens: a request sent at once is answered, not
    refused because uvicorn's loop has not started yet. The process is stopped right after its
    ready line, so only the kernel's listen backlog can accept the connection."""
    command = [sys.executable, "-m", "tests.nextcloud_double", "--data", str(tmp_path), "--port", "0"]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            ready = json.loads(process.stdout.readline())
            os.kill(process.pid, signal.SIGSTOP)
            try:
                url = urlsplit(ready["url"])
                with socket.create_connection((url.hostname, url.port), timeout=10):
                    pass  # accepted by the backlog while the process cannot run
            finally:
                os.kill(process.pid, signal.SIGCONT)
            answer = httpx.get(f"{ready['url']}/status.php", timeout=30)
            assert answer.status_code == 200
            assert answer.json()["installed"] is True
        finally:
            process.terminate()
            process.wait(timeout=30)
