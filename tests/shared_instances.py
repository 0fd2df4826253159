"""The real Nextclouds as the pytest-xdist workers share them (ADR 0053): a test holds
`InstanceLock` for each instance it uses, from its reset to its last teardown; `make test` installs
the instances not installed yet in the background (`prepare`, ADR 0068) and `make clean` stops and
removes this checkout's (`clean`):

    python3 -m tests.shared_instances prepare|clean

Standard library only: `prepare` runs before the venv is built.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.real_nextcloud import INSTANCES_ROOT, VERSIONS, Kit, KitError, checkout_key, instance_dir

__all__ = ["InstanceLock", "clean", "prepare", "prepare_log"]


class InstanceLock:
    """A test's hold on one shared instance (an flock beside its directory): every test that uses
    the instance resets it first, so two tests must never use it at once, whichever worker runs
    them. Taken in a fixed order (`sorted`) when a test uses several."""

    def __init__(self, directory: Path) -> None:
        self.path = directory.with_name(directory.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> float:
        """Wait for the instance; return how long that took (seconds)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.parent.chmod(0o755)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        began = time.monotonic()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return time.monotonic() - began

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


def clean() -> None:
    """Stop and remove this checkout's instances (`make clean`); other checkouts' stay."""
    names = [d.name for v in VERSIONS for d in (instance_dir(v), instance_dir(v, apps=True))]
    found = (
        sorted(p for p in INSTANCES_ROOT.glob(f"{checkout_key()}*") if p.is_dir())
        if INSTANCES_ROOT.is_dir()
        else []
    )
    kit = None
    with contextlib.suppress(KitError):
        kit = Kit.locate()
    for directory in found:
        if kit is not None and (directory / "run").exists():
            with contextlib.suppress(KitError, subprocess.TimeoutExpired):
                kit.run("stop", str(directory), timeout=120)
        print(f"removing {directory}" + ("" if directory.name in names else " (an older layout)"))
        shutil.rmtree(directory, ignore_errors=True)
        directory.with_name(directory.name + ".lock").unlink(missing_ok=True)
    prepare_log().unlink(missing_ok=True)


# Two chains of about equal length (29 installs fastest, 34 with the apps slowest), run at once.
_PREPARE_CHAINS = ((("29", False), ("34", True)), (("34", False), ("29", True)))


def prepare_log() -> Path:
    """Beside the instances: what `prepare` installed, in how long, or why it failed."""
    first = instance_dir("29")
    return first.with_name(first.name + ".prepare.log")


def prepare() -> None:
    """Install this checkout's instances that are not installed yet, two at a time, and leave them
    stopped (`make test` runs this in the background while it builds the venv, lints and
    type-checks: ADR 0068). Each is held as a test holds it, so a test or pytest's own starter that
    comes meanwhile waits for the install instead of running the kit on it too. A failure is
    printed here and shows again, loudly, in the tests that need the instance."""
    kit = Kit.locate()
    prepare_log().parent.mkdir(parents=True, exist_ok=True)
    log = prepare_log().open("a")

    def chain(instances: tuple[tuple[str, bool], ...]) -> None:
        for version, apps in instances:
            directory = instance_dir(version, apps=apps)
            lock = InstanceLock(directory)
            lock.acquire()
            try:
                if (directory / ".installed").exists():
                    continue
                began = time.monotonic()
                kit.start(version, apps=apps)
                kit.run("stop", str(directory), timeout=120)
                print(f"installed {directory} in {time.monotonic() - began:.0f} s", file=log, flush=True)
            except (KitError, OSError, subprocess.TimeoutExpired) as failed:
                print(f"{directory}: {failed}", file=log, flush=True)
            finally:
                lock.release()

    threads = [threading.Thread(target=chain, args=(instances,)) for instances in _PREPARE_CHAINS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log.close()


if __name__ == "__main__":
    commands = {"clean": clean, "prepare": prepare}
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        sys.exit("usage: python3 -m tests.shared_instances clean|prepare")
    commands[sys.argv[1]]()
