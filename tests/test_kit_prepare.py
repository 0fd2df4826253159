"""`make test` installs the real Nextclouds in the background while it builds the venv, lints and
type-checks (`python3 -m tests.shared_instances prepare`, ADR 0068): each instance not installed yet
is installed and left stopped, an installed one is left alone, and a test that comes meanwhile
waits for the install (the instance's lock) instead of running the kit on it too."""

from __future__ import annotations

import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.real_nextcloud import REPO, instance_dir
from tests.shared_instances import InstanceLock

# A stand-in for the kit: `start` "installs" (nextcloud.json, .installed) after a moment, every
# call is logged with the time it began and ended.
_FAKE_KIT = """#!/bin/bash
echo "begin $1 $2 $(date +%s.%N)" >> "$(dirname "$0")/calls"
if [ "$1" = start ] && [ ! -f "$2/.installed" ]; then
  mkdir -p "$2"; sleep 0.3
  echo '{"url": "http://127.0.0.1:1"}' > "$2/nextcloud.json"; touch "$2/.installed"
fi
echo "end $1 $2 $(date +%s.%N)" >> "$(dirname "$0")/calls"
echo "ready http://127.0.0.1:1 $2/nextcloud.json"
"""


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "kit" / "nextcloud"
    script.parent.mkdir()
    script.write_text(_FAKE_KIT)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("NEXTCLOUD_KIT", str(script))
    monkeypatch.setenv("NEXTCLOUD_DIR", str(tmp_path / "nc29"))
    monkeypatch.setenv("NEXTCLOUD_DIR_34", str(tmp_path / "nc34"))
    return script


def _calls(kit: Path) -> list[list[str]]:
    calls = kit.parent / "calls"
    return [line.split() for line in calls.read_text().splitlines()] if calls.exists() else []


def _prepare() -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.shared_instances", "prepare"], cwd=REPO, text=True)


def test_prepare_installs_each_missing_instance_and_leaves_it_stopped(kit: Path) -> None:
    instance_dir("34", apps=True).mkdir(parents=True)
    (instance_dir("34", apps=True) / ".installed").touch()  # installed by an earlier run
    assert _prepare().wait(timeout=60) == 0
    calls = [(call[0], call[1], Path(call[2]).name) for call in _calls(kit)]
    for name in ("nc29", "nc29-apps", "nc34"):
        assert ("begin", "start", name) in calls
        assert calls.index(("end", "stop", name)) > calls.index(("end", "start", name))
    assert not [call for call in calls if call[2] == "nc34-apps"]
    log = instance_dir("29").with_name("nc29.prepare.log").read_text()
    assert log.count("installed ") == 3


def test_a_test_that_comes_during_the_install_waits_for_it(kit: Path) -> None:
    running = _prepare()
    directory = instance_dir("29")
    began = ["begin", "start", str(directory)]
    deadline = time.monotonic() + 30
    while began not in [call[:3] for call in _calls(kit)]:  # polled until prepare began the install
        assert running.poll() is None
        assert time.monotonic() < deadline, "prepare never began the install"
        time.sleep(0.01)
    lock = InstanceLock(directory)
    lock.acquire()  # what a test does before its reset
    try:
        assert (directory / ".installed").exists()
        assert ["end", "stop", str(directory)] in [call[:3] for call in _calls(kit)]
    finally:
        lock.release()
    assert running.wait(timeout=60) == 0
