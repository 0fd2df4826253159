"""The reset every real-Nextcloud test starts with, without reloading php-fpm (ADR 0107): what a
test left behind in php-fpm's caches is gone at once, and nothing of it still runs."""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import tests.real_nextcloud
from tests.backends import Nextcloud
from tests.php_fpm import PhpFpmError, requests_in_flight, run_script
from tests.real_nextcloud import Instance


def _instance(nextcloud: Nextcloud) -> Instance:
    assert nextcloud.instance is not None
    return nextcloud.instance


def _status(nextcloud: Nextcloud) -> dict[str, object]:
    answer: dict[str, object] = httpx.get(f"{nextcloud.url}/status.php", timeout=30).json()
    return answer


@contextlib.contextmanager
def _held_request(fpm_socket: Path) -> Iterator[None]:
    """A request php-fpm took and has not answered (a connection that sends nothing), held until
    the block ends; entered once a worker has accepted it."""
    with socket.socket(socket.AF_UNIX) as held:
        held.connect(str(fpm_socket))
        deadline = time.monotonic() + 30
        while requests_in_flight(fpm_socket) != 1:
            assert time.monotonic() < deadline, "php-fpm never took the connection"
            time.sleep(0.01)  # polling, bounded by the deadline above
        yield


def test_an_app_password_made_after_the_seed_is_refused_at_once(each_real_nextcloud: Nextcloud) -> None:
    nextcloud = each_real_nextcloud
    instance = _instance(nextcloud)
    made = instance.occ("user:auth-tokens:add", "alice").strip().splitlines()[-1].strip()
    home = nextcloud.dav_path(nextcloud.alice, "")
    propfind = {"method": "PROPFIND", "url": f"{nextcloud.url}{home}", "headers": {"Depth": "0"}}
    # accepted once: Nextcloud keeps the checked token in APCu for about ten seconds
    assert httpx.request(**propfind, auth=("alice", made), timeout=30).status_code == 207  # type: ignore[arg-type]
    instance.reset(instance.seed)
    assert httpx.request(**propfind, auth=("alice", made), timeout=30).status_code == 401  # type: ignore[arg-type]


def test_a_restored_config_counts_at_once(each_real_nextcloud: Nextcloud) -> None:
    nextcloud = each_real_nextcloud
    instance = _instance(nextcloud)
    instance.occ("config:system:set", "maintenance", "--value=true", "--type=boolean")
    assert _status(nextcloud)["maintenance"] is True  # php-fpm has read this config.php
    instance.reset(instance.seed)
    assert _status(nextcloud)["maintenance"] is False


def test_the_seeded_app_passwords_count_as_just_checked(each_real_nextcloud: Nextcloud) -> None:
    """Else each one's first use would check its login password again (argon2, up to a second)."""
    instance = _instance(each_real_nextcloud)
    before = int(time.time())
    instance.reset(instance.seed)
    database = instance.dir / "data" / "owncloud.db"
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        checks = [int(row[0]) for row in db.execute("SELECT last_check FROM oc_authtoken")]
    assert checks
    assert min(checks) >= before


def test_a_request_in_flight_is_counted_until_it_ends(
    each_real_nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = _instance(each_real_nextcloud)
    fpm_socket = instance.dir / "run" / "php-fpm.sock"
    assert instance._quiet() is True  # the reset's own requests have ended (within 30 s)
    assert requests_in_flight(fpm_socket) == 0
    with _held_request(fpm_socket), monkeypatch.context() as short:
        short.setattr("tests.real_nextcloud._QUIET_DEADLINE", 0.2)
        assert instance._quiet() is False  # a reset would reload php-fpm rather than wait forever
    assert instance._quiet() is True  # once php-fpm has closed its side (within 30 s)
    assert requests_in_flight(fpm_socket) == 0


def test_a_reset_restores_nothing_while_a_request_runs(
    each_real_nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = _instance(each_real_nextcloud)
    fpm_socket = instance.dir / "run" / "php-fpm.sock"
    marker = instance.dir / "data" / "left-by-the-last-test"
    marker.write_text("restored away by the reset")
    looked = threading.Semaphore(0)  # released each time the reset finds a request running

    def counted(path: Path) -> int:
        running = requests_in_flight(path)
        if running:
            looked.release()
        return running

    monkeypatch.setattr(tests.real_nextcloud, "requests_in_flight", counted)
    failed: list[BaseException] = []

    def reset() -> None:
        try:
            instance.reset(instance.seed)
        except BaseException as exc:  # handed to the test's thread
            failed.append(exc)

    with _held_request(fpm_socket):
        resetting = threading.Thread(target=reset)
        resetting.start()
        for _ in range(3):  # the reset has looked three times, and waits
            assert looked.acquire(timeout=30)
        assert marker.exists()  # nothing restored while the request runs
    resetting.join(timeout=60)
    assert not resetting.is_alive()
    assert failed == []
    assert not marker.exists()


def test_a_script_that_does_not_finish_is_an_error(each_real_nextcloud: Nextcloud) -> None:
    instance = _instance(each_real_nextcloud)
    script = instance.dir / "forget-caches-broken.php"
    script.write_text("<?php\nthrow new RuntimeException('stopped half way');\n")
    script.chmod(0o644)
    try:
        with pytest.raises(PhpFpmError, match="stopped half way|forget-caches-broken"):
            run_script(instance.dir / "run" / "php-fpm.sock", script, {})
    finally:
        script.unlink()
