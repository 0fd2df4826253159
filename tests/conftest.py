"""Shared fixtures: a fresh Nextcloud double per test, the real Nextclouds from the kit (29.0.6
and 34.0.1), settings pointing at them, MCP clients.

`nextcloud` runs a test against the double and against each real Nextcloud (reset to its seed
state before each test); `double` and the fixtures built on it are for what only the double can
show (injected faults, recorded requests). `real_nextcloud` is the real 29 alone, for browser
tests: 34's web pages do not render in the kit (its README), so on 34 its pages are driven over
HTTP instead. The summary at the end gives the count per target and the time beside the budget.

The real Nextclouds are shared by the pytest-xdist workers, one per version and one with the apps
per version (ADR 0053); a version's tests go to one worker (ADR 0099). A test holds each instance
it uses from before its setup (where the reset is) to after its teardown, so no other test resets
it meanwhile. The session's own process (xdist's controller, or pytest) stops them at the end."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from nextcloud_mcp_server.config import Settings, load_settings
from tests.backends import Login, Nextcloud
from tests.browser import Browser, Screenshots
from tests.nextcloud_double import Account, NextcloudDouble
from tests.nextcloud_double.server import serve_in_thread
from tests.oidc import IdP, running_idp
from tests.postgres import PostgresCluster, postgres_cluster
from tests.real_nextcloud import KIT_SEED, VERSIONS, Instance, Kit, KitError, instance_dir
from tests.shared_instances import InstanceLock
from tests.targets import spread_over_versions

# the suite's time beside its budget, and where it went; what the inner loop leaves out
pytest_plugins = ("tests.suite_budget", "tests.inner_loop", "tests.worker_groups")

ADMIN_PASSWORD = "admin-login-password"
ADMIN_APP_PASSWORD = "Abcde-Fghij-Klmno-Pqrst-Uvwxy"
ALICE_APP_PASSWORD = "Alice-App00-Pass0-word0-00000"
ALICE_PASSWORD = "alice-login-password"


# fixture -> the instance it stands for: (version, with the apps)
_INSTANCE_FIXTURES = {
    "real_nextcloud_instance": ("29", False),
    "real_nextcloud_34_instance": ("34", False),
    "real_nextcloud_apps_instance": ("29", True),
    "real_nextcloud_34_apps_instance": ("34", True),
}
_PARAMETRIZED = ("nextcloud", "each_real_nextcloud", "each_real_nextcloud_as_seeded", "apps_nextcloud")


def _instances_used(item: pytest.Item) -> set[tuple[str, bool]]:
    """The real Nextclouds a collected test meets: (version, with the apps)."""
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    used = set()
    for name in _PARAMETRIZED:
        param = params.get(name)
        if isinstance(param, str) and param.startswith("real"):
            used.add((param.removeprefix("real") or "29", name == "apps_nextcloud"))
    names = getattr(item, "fixturenames", ())
    used.update(instance for fixture, instance in _INSTANCE_FIXTURES.items() if fixture in names)
    return used


def _real_version(item: pytest.Item) -> str | None:
    """The real Nextcloud a collected test meets ("29", "34"), or None."""
    versions = sorted({version for version, _ in _instances_used(item)}, reverse=True)
    return versions[0] if versions else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that use a real Nextcloud carry the `real_nextcloud` marker, so the inner loop can
    leave them out (`make test-fast`); CI runs them all. The forms `tests/targets.py` spreads over
    the two real versions run on one of them each (reported as deselected). A version's tests form
    one worker group (`tests/worker_groups.py`)."""
    left_out = spread_over_versions(items)
    if left_out:
        items[:] = [item for item in items if all(item is not out for out in left_out)]
        config.hook.pytest_deselected(items=left_out)
    for item in items:
        version = _real_version(item)
        if version is not None:
            item.add_marker(pytest.mark.real_nextcloud)
            item.add_marker(pytest.mark.xdist_group(f"nextcloud-{version}"))
            if item.get_closest_marker("timeout") is None:
                # the hang guard counts the wait for a shared instance another worker's test holds
                item.add_marker(pytest.mark.timeout(_SHARED_TIMEOUT))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without the kit, say so before the first test, not after twenty minutes of errors. With it,
    start the instances the selected tests use in the background, while tests that need none run:
    on a checkout's first run that is the install (minutes for 34 on a busy machine), so the first
    test of an instance not yet installed may wait for it beyond the usual two minutes."""
    used = set().union(*(_instances_used(item) for item in session.items))
    if not used or session.config.option.collectonly:
        return
    try:
        kit = Kit.locate()
    except KitError as missing:
        if "PYTEST_XDIST_WORKER" not in os.environ:
            raise pytest.UsageError(str(missing)) from None
        return  # a worker cannot end the session cleanly: each such test fails at once with it
    new = {key for key in used if not (instance_dir(key[0], apps=key[1]) / ".installed").exists()}
    for item in session.items:
        marker = item.get_closest_marker("timeout")
        bound = marker.args[0] if marker is not None and marker.args else None
        if _instances_used(item) & new and (not isinstance(bound, int | float) or bound < _INSTALL_TIMEOUT):
            item.add_marker(pytest.mark.timeout(_INSTALL_TIMEOUT), append=False)
    # the second worker goes the other way round: two installs at once, never the same one twice
    order = sorted(used, reverse=os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0")
    threading.Thread(target=_start_all, args=(kit, order), name="nextcloud-start", daemon=True).start()


_INSTALL_TIMEOUT = 900  # the kit's own bound on a start
_SHARED_TIMEOUT = 360  # 120 s of the test's own plus the longest wait for another worker's test


def _start_all(kit: Kit, order: list[tuple[str, bool]]) -> None:
    for version, apps in order:
        # held like a test holds it: nothing else runs the kit on that directory meanwhile (a first
        # install that fails is thrown away and made again: no one may be waiting inside it)
        lock = InstanceLock(instance_dir(version, apps=apps))
        lock.acquire()
        try:
            with contextlib.suppress(KitError, OSError, subprocess.TimeoutExpired):
                kit.start(version, apps=apps)  # a failure shows again, loudly, in the tests that need it
        finally:
            lock.release()


_HELD: list[InstanceLock] = []


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Hold every shared instance this test uses (in a fixed order: no two workers wait for each
    other) before any fixture runs; `pytest_runtest_teardown` lets go after the last one."""
    used = sorted(_instances_used(item))
    if used:
        item.user_properties.append(("nextcloud", _real_version(item)))
        waited = 0.0
        for version, apps in used:
            lock = InstanceLock(instance_dir(version, apps=apps))
            _HELD.append(lock)
            waited += lock.acquire()
        item.user_properties.append(("nextcloud_wait", waited))
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        while _HELD:
            _HELD.pop().release()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The process that ran the session stops the shared instances (they stay installed for the
    next run; `make clean` removes them)."""
    if hasattr(session.config, "workerinput") or session.config.option.collectonly:
        return  # an xdist worker (the other one may still be using them), or nothing was run
    with contextlib.suppress(KitError):
        kit = Kit.locate()
        for version in VERSIONS:
            for apps in (False, True):
                directory = instance_dir(version, apps=apps)
                if not (directory / "run").exists():
                    continue
                # held as a test holds it: another session of this checkout (a second `pytest`)
                # may be in a test on it; its next test's reset starts it again
                lock = InstanceLock(directory)
                lock.acquire()
                try:
                    if (directory / "run" / "nginx.pid").exists() or (
                        directory / "run" / "php-fpm.pid"
                    ).exists():
                        kit.run("stop", str(directory), timeout=120)
                finally:
                    lock.release()


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never read the developer's environment or a stray .env file."""
    for name in Settings.model_fields:
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def double(tmp_path: Path) -> NextcloudDouble:
    accounts = [
        Account("admin", ADMIN_PASSWORD, display_name="Admin", app_passwords={ADMIN_APP_PASSWORD}),
        Account("alice", ALICE_PASSWORD, display_name="Alice", app_passwords={ALICE_APP_PASSWORD}),
    ]
    return NextcloudDouble(tmp_path / "nextcloud", accounts)


@pytest.fixture
def double_url(double: NextcloudDouble) -> Iterator[str]:
    with serve_in_thread(double, lifespan="off") as url:
        yield url


def _started(version: str, *, apps: bool = False) -> Instance:
    return Kit.locate().start(version, apps=apps)  # stopped at the end by pytest_sessionfinish


@pytest.fixture(scope="session")
def real_nextcloud_instance() -> Instance:
    """The real Nextcloud 29.0.6 with Notes from the kit, shared by the workers: installed on a
    checkout's first run, started in under a second on later ones. Never skipped: without it,
    tests fail."""
    return _started("29")


@pytest.fixture(scope="session")
def real_nextcloud_34_instance() -> Instance:
    """The real Nextcloud 34.0.1 with Notes 6.0.2, in a directory of its own, as above."""
    return _started("34")


@pytest.fixture(scope="session")
def real_nextcloud_apps_instance() -> Instance:
    """The real 29.0.6 with the kit's apps (`--apps all`: Deck, Talk, Tables, Collectives and
    the file apps), for the toolsets of those apps; started only by the tests that ask for it."""
    return _started("29", apps=True)


@pytest.fixture(scope="session")
def real_nextcloud_34_apps_instance() -> Instance:
    """The real 34.0.1 with the kit's apps, as above."""
    return _started("34", apps=True)


# The seed tests start from: the kit's, less what Nextcloud 34 adds at a first login (its sample
# event), made once per instance install and restored like the kit's (ADR 0079).
TESTS_SEED = "tests"


def _real(instance: Instance, *, as_seeded: bool = False) -> Nextcloud:
    kit_seed = as_seeded or int(str(instance.version).split(".")[0]) < 34 or not instance.has_seed(TESTS_SEED)
    url = instance.reset(KIT_SEED if kit_seed else TESTS_SEED)
    config = instance.config
    logins = {
        name: Login(name, config[name]["password"], config[name]["app_password"], display_name=display)
        for name, display in (("admin", "admin"), ("alice", "Alice"))
    }
    nextcloud = Nextcloud("real", url, logins["admin"], logins["alice"], instance=instance)
    if not as_seeded and nextcloud.major >= 34 and not instance.has_seed(TESTS_SEED):
        nextcloud.remove_sample_events()
        instance.save_seed(TESTS_SEED)
    return nextcloud


REAL = {"real": "real_nextcloud_instance", "real34": "real_nextcloud_34_instance"}


@pytest.fixture(
    params=[
        "double",
        pytest.param("real", marks=pytest.mark.real_nextcloud),
        pytest.param("real34", marks=pytest.mark.real_nextcloud),
    ]
)
def nextcloud(request: pytest.FixtureRequest) -> Iterator[Nextcloud]:
    """The Nextcloud under test: the double (fresh per test), then the real 29 and the real 34
    (each reset per test)."""
    if request.param in REAL:
        yield _real(request.getfixturevalue(REAL[request.param]))
        return
    double: NextcloudDouble = request.getfixturevalue("double")
    url: str = request.getfixturevalue("double_url")
    yield Nextcloud(
        "double",
        url,
        Login("admin", ADMIN_PASSWORD, ADMIN_APP_PASSWORD, display_name="Admin"),
        Login("alice", ALICE_PASSWORD, ALICE_APP_PASSWORD, display_name="Alice"),
        double=double,
    )


APPS = {"real": "real_nextcloud_apps_instance", "real34": "real_nextcloud_34_apps_instance"}


@pytest.fixture(params=["real", "real34"])
def apps_nextcloud(request: pytest.FixtureRequest) -> Nextcloud:
    """The real 29 and the real 34 with Deck, Talk, Tables and Collectives installed (each reset
    to its seed state per test)."""
    return _real(request.getfixturevalue(APPS[request.param]))


@pytest.fixture
def real_nextcloud(real_nextcloud_instance: Instance) -> Nextcloud:
    """Only the real Nextcloud 29, reset to its seed state: for browser tests (34's pages do not
    render in the kit) and what the double cannot show."""
    return _real(real_nextcloud_instance)


@pytest.fixture
def real_nextcloud_34(real_nextcloud_34_instance: Instance) -> Nextcloud:
    """Only the real Nextcloud 34, reset: its pages driven over HTTP (`tests/nextcloud_pages.py`)."""
    return _real(real_nextcloud_34_instance)


@pytest.fixture(params=["real", "real34"])
def each_real_nextcloud(request: pytest.FixtureRequest) -> Nextcloud:
    """Each real Nextcloud in turn, reset to its seed state: for what only a real one shows."""
    return _real(request.getfixturevalue(REAL[request.param]))


@pytest.fixture(params=["real", "real34"])
def each_real_nextcloud_as_seeded(request: pytest.FixtureRequest) -> Nextcloud:
    """As above, with what Nextcloud itself put there at the first login (34's sample event)."""
    return _real(request.getfixturevalue(REAL[request.param]), as_seeded=True)


@pytest.fixture
def settings(double_url: str) -> Settings:
    return load_settings(
        env_file=None,
        nextcloud_host=double_url,
        nextcloud_username="admin",
        nextcloud_password=ADMIN_APP_PASSWORD,
    )


@pytest.fixture
def mcp_url(settings: Settings) -> Iterator[str]:
    """The MCP endpoint of the server (in-process uvicorn) configured for the double."""
    from tests.mcp_clients import running_app

    with running_app(settings) as base:
        yield f"{base}/mcp"


@pytest.fixture
def server_env(double_url: str) -> dict[str, str]:
    """The environment a user would give the server process (as in Claude Desktop's config)."""
    return {
        "NEXTCLOUD_HOST": double_url,
        "NEXTCLOUD_USERNAME": "admin",
        "NEXTCLOUD_PASSWORD": ADMIN_APP_PASSWORD,
    }


@pytest.fixture(scope="session")
def idp() -> Iterator[IdP]:
    """The OpenID provider (JWT access tokens whose aud also names another API)."""
    with running_idp(EXTRA_AUDIENCES="https://other-api.example/") as provider:
        yield provider


@pytest.fixture(scope="session")
def opaque_idp() -> Iterator[IdP]:
    """The same provider issuing opaque access tokens (for introspection)."""
    with running_idp(ACCESS_TOKEN_FORMAT="opaque") as provider:
        yield provider


@pytest.fixture(scope="session")
def rotating_idp() -> Iterator[IdP]:
    """A new refresh token on every refresh (the old one dies): a second refresh with a stale token
    would fail loudly. Access tokens live 10 minutes, so a loaded machine never sees one expire
    mid-test; tests move their own clock to make a token fall due."""
    with running_idp(ACCESS_TOKEN_TTL="600", ROTATE_REFRESH="1") as provider:
        yield provider


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """A throwaway PostgreSQL cluster (Debian's package), shared by the session's tests; each test
    takes an empty database of its own with `postgres.database()`."""
    with postgres_cluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's Chromium under Playwright, started once per session (each person gets a fresh
    context of it)."""
    chromium = Browser().start()
    try:
        yield chromium
    finally:
        chromium.stop()


@pytest.fixture
def screenshots(request: pytest.FixtureRequest) -> Screenshots:
    """Where this test keeps the screenshots of every page a person saw."""
    return Screenshots(request.node.name)
