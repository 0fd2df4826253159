"""The real Nextclouds of the test suite: `../shared/nextcloud/nextcloud`, a kit that runs
Nextcloud 29.0.6 with Notes 4.13.1, or 34.0.1 with Notes 6.0.2, on 127.0.0.1 (Debian's nginx and
php-fpm, SQLite).

    kit = Kit.locate()                 # NEXTCLOUD_KIT, else ../shared/nextcloud/nextcloud
    instance = kit.start("29")         # installs on first use (about 20 s), then starts in < 1 s
    instance.reset()                   # back to the seed state in a few hundredths of a second
    instance.occ("user:auth-tokens:list", "alice")

Each version has an instance directory of its own, and one with the apps, kept across runs
(NEXTCLOUD_DIR and NEXTCLOUD_DIR_34, else one per checkout under /var/tmp/nextcloud-mcp-tests):
the first run of a checkout installs, later runs only start them. How the pytest-xdist workers
share them, and how `make test` prepares and `make clean` removes them: tests/shared_instances.py.
Nothing here skips: a missing kit or a failed start fails the tests that need it, loudly.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.php_fpm import requests_in_flight, run_script

__all__ = [
    "INSTANCES_ROOT",
    "KIT_SEED",
    "REPO",
    "VERSIONS",
    "Instance",
    "Kit",
    "KitError",
    "checkout_key",
    "instance_dir",
]

REPO = Path(__file__).resolve().parent.parent
_KIT_CANDIDATES = (REPO.parent / "shared" / "nextcloud" / "nextcloud",)
INSTANCES_ROOT = Path("/var/tmp/nextcloud-mcp-tests")
# The releases every real-Nextcloud test meets: the oldest still run and the newest.
VERSIONS = ("29", "34")


# the kit's seed state (`.pristine`): what `reset` restores unless told another
KIT_SEED = "kit"
_FPM_READY = b"ready to handle connections"
_RESET_DEADLINE = 120.0  # a reload and a first answer; seconds even at load 20

_QUIET_DEADLINE = 30.0  # seconds a reset waits for the last test's requests to end before reloading
# After a restore: Nextcloud checks an app password's login password again (argon2, 0.3 s idle
# and up to a second loaded) on its first use when it was last checked over five minutes ago, as
# every seeded one was; marked checked now, each is what it is in a server in use. APCu holds
# what Nextcloud read from the data just replaced. (`config.php` needs nothing: Nextcloud asks
# opcache to look at its time at every read.) Prints "ok" last: `run_script` checks that it got
# that far.
_FORGET_CACHES = """<?php
// Run by the test suite's reset of this instance through php-fpm (ADR 0107 of the MCP bridge).
$CONFIG = [];
include $_SERVER['NC_CONFIG'];
$database = new PDO('sqlite:' . $CONFIG['datadirectory'] . '/' . ($CONFIG['dbname'] ?? 'owncloud') . '.db');
$database->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_EXCEPTION);
$database->exec('PRAGMA busy_timeout = 30000');
$tokens = ($CONFIG['dbtableprefix'] ?? 'oc_') . 'authtoken';
$database->prepare("UPDATE $tokens SET last_check = ?")->execute([time()]);
$database = null;
apcu_clear_cache();
echo "ok";
"""

_PASSWORD_TAKEN_FOR_AN_OPTION = 'The "--admin-pass" option requires a value'


class KitError(RuntimeError):
    """The real Nextcloud could not be found or started; the message says what to do."""


def instance_dir(version: str, *, apps: bool = False) -> Path:
    """One directory per checkout, version and app set, shared by the pytest-xdist workers."""
    explicit = os.environ.get("NEXTCLOUD_DIR" if version == "29" else f"NEXTCLOUD_DIR_{version}")
    suffix = "-apps" if apps else ""  # apps are chosen at install: a directory of their own
    if explicit:
        return Path(f"{explicit}{suffix}")
    # www-data must traverse every parent (so not /root, not pytest's tmp_path); one per checkout
    # and version, so two checkouts on one machine never reset each other's data.
    return INSTANCES_ROOT / ((checkout_key() if version == "29" else f"{checkout_key()}-{version}") + suffix)


def checkout_key() -> str:
    """What names this checkout's instances (a hash of its path)."""
    return hashlib.sha256(str(REPO).encode()).hexdigest()[:10]


@dataclass
class Kit:
    script: Path
    log: list[str] = field(default_factory=list)

    @classmethod
    def locate(cls) -> Kit:
        explicit = os.environ.get("NEXTCLOUD_KIT")
        candidates = [Path(explicit)] if explicit else list(_KIT_CANDIDATES)
        for candidate in candidates:
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return cls(candidate)
        raise KitError(
            "the real Nextcloud kit was not found at "
            + ", ".join(str(c) for c in candidates)
            + "; set NEXTCLOUD_KIT to the kit's `nextcloud` script (`tests/check-kit.sh` says where it"
            + " comes from; `make test-fast` runs every test that needs neither it nor a browser)"
        )

    def run(self, *args: str, timeout: float = 900) -> str:
        """Run the kit; return its standard output (start and reset end with `ready <url> <json>`)."""
        done = subprocess.run(
            [str(self.script), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, "NO_PROXY": "127.0.0.1,localhost"},
        )
        self.log.append(done.stdout + done.stderr)
        if done.returncode != 0:
            raise KitError(
                f"`nextcloud {' '.join(args[:2])}` failed ({done.returncode}):\n{done.stderr[-4000:]}"
            )
        return done.stdout

    def start(self, version: str = "29", directory: Path | None = None, *, apps: bool = False) -> Instance:
        """`apps`: with Deck, Talk, Tables and Collectives (the kit's `--apps all`), in a directory
        of its own (the plain instance stays as it is)."""
        directory = directory or instance_dir(version, apps=apps)
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.parent.chmod(0o755)
        args = ("start", str(directory), "--version", version, *(("--apps", "all") if apps else ()))
        first_install = not (directory / "nextcloud.json").exists()
        try:
            self.run(*args)
        except KitError as exc:
            # The kit's random admin password is base64url: one in 64 begins with "-", which
            # occ reads as an option ("The --admin-pass option requires a value"). A first
            # install that failed so is thrown away and made once more; anything else is loud.
            if not (first_install and _PASSWORD_TAKEN_FOR_AN_OPTION in str(exc)):
                raise
            with contextlib.suppress(KitError):
                self.run("stop", str(directory))  # nothing may be running yet
            shutil.rmtree(directory)
            self.run(*args)
        return Instance(self, directory)


@dataclass
class Instance:
    kit: Kit
    dir: Path
    seed: str = KIT_SEED  # the one the last `reset` restored

    @property
    def config(self) -> dict[str, Any]:
        """`nextcloud.json`: url, port, version, users with passwords and app passwords, the OAuth2
        client, log paths (rewritten at every start)."""
        data: dict[str, Any] = json.loads((self.dir / "nextcloud.json").read_text())
        return data

    @property
    def url(self) -> str:
        return str(self.config["url"])

    @property
    def version(self) -> str:
        """The full release, e.g. "34.0.1"."""
        return str(self.config["version"])

    def reset(self, seed: str = KIT_SEED) -> str:
        """Back to a seed state (same users, app passwords and OAuth client); returns the URL.

        `KIT_SEED` is the kit's own (`.pristine`); another name is one `save_seed` made from it.
        A running instance is reset under the kit's own lock, without stopping nginx (ADR 0079) or
        php-fpm (ADR 0107): once php-fpm serves no request, the data directory and `config.php`
        are restored and the PHP sessions cleared, then a script in php-fpm marks the restored
        app passwords checked now and empties APCu. A stopped one goes through the kit."""
        pristine = self._seed_dir(seed)
        self.seed = seed
        if not (pristine / "data").is_dir():
            raise KitError(f"no seed {seed!r} in {self.dir}")
        with self._kit_lock():
            fpm = _running(self.dir / "run" / "php-fpm.pid", self.dir / "conf" / "php-fpm.conf")
            nginx = _running(self.dir / "run" / "nginx.pid", self.dir / "conf" / "nginx.conf")
            if fpm is not None and nginx is not None:
                if not self._quiet():
                    self._reload_php(fpm)  # ends what still runs, as every reset did before
                self._restore(pristine)
                self._forget_caches()
                return self._ready()
        url = self.kit.run("reset", str(self.dir), timeout=300).strip().splitlines()[-1].split()[1]
        if seed != KIT_SEED:  # started by the kit on its seed: now the one asked for
            return self.reset(seed)
        return url

    def has_seed(self, seed: str) -> bool:
        """A seed `save_seed` made from the kit's current one (a reinstall makes it stale)."""
        made_from, kit_seed = (self._seed_dir(s) / "nextcloud.json" for s in (seed, KIT_SEED))
        return made_from.is_file() and kit_seed.is_file() and made_from.read_bytes() == kit_seed.read_bytes()

    def save_seed(self, seed: str, *, note: dict[str, Any] | None = None) -> None:
        """Keep the instance's state now (no request in flight: the caller holds the instance) as
        the seed `seed`, beside the kit's own, with `note` (what it holds) for `seed_note`."""
        assert seed != KIT_SEED, "the kit's seed is the kit's"
        target, partial = self._seed_dir(seed), self.dir / f".seed-{seed}.partial"
        with self._kit_lock():
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir(mode=0o700)
            _copy(self.dir / "data", partial / "data")
            _copy(self.dir / "server" / "config" / "config.php", partial / "config.php")
            _copy(self._seed_dir(KIT_SEED) / "nextcloud.json", partial / "nextcloud.json")
            (partial / "note.json").write_text(json.dumps(note or {}))
            shutil.rmtree(target, ignore_errors=True)
            partial.rename(target)
        self.seed = seed  # the state now is that seed's

    def seed_note(self, seed: str) -> dict[str, Any]:
        """The note `save_seed` kept with `seed` (empty for one kept without)."""
        note = self._seed_dir(seed) / "note.json"
        data: dict[str, Any] = json.loads(note.read_text()) if note.is_file() else {}
        return data

    def reset_with_users(self, passwords: dict[str, str]) -> dict[str, str]:
        """Back to the seed of the last reset with the accounts `passwords` names added (user ->
        login password; as `add_user` makes them); returns an app password for each. Everything
        made since that reset is gone: a test calls it first. The seed with them is made once per
        install (two occ runs a user, about 1.6 s) and restored later (a few hundredths of a second)."""
        base = self.seed
        seed = "+".join((base, *sorted(passwords)))
        if self.has_seed(seed) and self.seed_note(seed).get("passwords") == passwords:
            self.reset(seed)
            app_passwords: dict[str, str] = self.seed_note(seed)["app_passwords"]
            return app_passwords
        self.reset(base)
        made = {user: self.add_user(user, password) for user, password in sorted(passwords.items())}
        self.save_seed(seed, note={"passwords": passwords, "app_passwords": made})
        return made

    def _seed_dir(self, seed: str) -> Path:
        return self.dir / (".pristine" if seed == KIT_SEED else f".seed-{seed}")

    @contextlib.contextmanager
    def _kit_lock(self) -> Iterator[None]:
        """The kit's own lock on the directory (its `start`, `reset` and `stop` take it)."""
        fd = os.open(self.dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def forget_cached_state(self) -> None:
        """Empty what php-fpm keeps between requests (APCu: among others the tokens Nextcloud
        checked in the last seconds) by a reload, the data left as it is: what Nextcloud would do
        anyway once its caches expire, at once."""
        with self._kit_lock():
            fpm = _running(self.dir / "run" / "php-fpm.pid", self.dir / "conf" / "php-fpm.conf")
            if fpm is None:
                raise KitError(f"php-fpm of {self.dir} is not running")
            self._reload_php(fpm)

    def _quiet(self) -> bool:
        """Wait (bounded) until php-fpm serves no request: none of the last test's lands in the
        data about to be restored. False if one still runs at the deadline."""
        deadline = time.monotonic() + _QUIET_DEADLINE
        while requests_in_flight(self.dir / "run" / "php-fpm.sock"):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)  # polling, bounded by the deadline above
        return True

    def _forget_caches(self) -> None:
        """Run `_FORGET_CACHES` in php-fpm (as www-data, so files it writes stay Nextcloud's)."""
        script = self.dir / "forget-caches.php"
        if not script.is_file() or script.read_text() != _FORGET_CACHES:
            script.write_text(_FORGET_CACHES)
            script.chmod(0o644)
        config = self.dir / "server" / "config" / "config.php"
        run_script(self.dir / "run" / "php-fpm.sock", script, {"NC_CONFIG": str(config)})

    def _reload_php(self, master: int) -> None:
        """php-fpm's graceful reload (SIGUSR2): the master ends its workers and executes itself
        again, keeping its socket (nginx's requests meanwhile wait in its queue); done when it
        logs that it is ready once more."""
        log = self.dir / "log" / "php-fpm.log"
        before = log.stat().st_size if log.exists() else 0
        os.kill(master, signal.SIGUSR2)
        deadline = time.monotonic() + _RESET_DEADLINE
        while _FPM_READY not in _tail(log, before):
            if time.monotonic() > deadline:
                raise KitError(f"php-fpm of {self.dir} did not reload within {_RESET_DEADLINE:.0f} s")
            time.sleep(0.02)  # polling the log, bounded by the deadline above

    def _restore(self, pristine: Path) -> None:
        """What the kit's `reset` restores: the data directory, `config.php`, no PHP sessions."""
        data = self.dir / "data"
        shutil.rmtree(data)
        _copy(pristine / "data", data)
        _copy(pristine / "config.php", self.dir / "server" / "config" / "config.php")
        sessions = self.dir / "run" / "sessions"
        shutil.rmtree(sessions, ignore_errors=True)
        sessions.mkdir(mode=0o700)
        shutil.chown(sessions, "www-data", "www-data")

    def _ready(self) -> str:
        """Poll `status.php` (bounded) until Nextcloud answers installed; return its URL."""
        url = self.url
        deadline = time.monotonic() + _RESET_DEADLINE
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        status = f"{url}/status.php"
        while True:
            with contextlib.suppress(OSError, ValueError), opener.open(status, timeout=30) as answer:
                if json.loads(answer.read()).get("installed") is True:
                    return url
            if time.monotonic() > deadline:
                raise KitError(f"{url}/status.php did not answer installed within {_RESET_DEADLINE:.0f} s")
            time.sleep(0.05)  # polling, bounded by the deadline above

    def stop(self) -> None:
        self.kit.run("stop", str(self.dir), timeout=120)

    def occ(self, *args: str, env: dict[str, str] | None = None) -> str:
        """`occ` as www-data (with `env` added to its environment); its whole standard output."""
        done = subprocess.run(
            [str(self.kit.script), "occ", str(self.dir), *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, **(env or {})},
            input="\n",  # occ may ask (a login password for a token): answered with nothing
        )
        if done.returncode != 0:
            raise KitError(f"occ {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
        return done.stdout

    def oauth_client(self, name: str, redirect_uri: str) -> dict[str, Any]:
        """Register another client in Nextcloud's OAuth2 app."""
        data: dict[str, Any] = json.loads(self.kit.run("oauth-client", str(self.dir), name, redirect_uri))
        return data

    def add_user(self, user: str, password: str) -> str:
        """A new account that has never logged in on the web; returns an app password for it."""
        self.occ("user:add", "--password-from-env", user, env={"OC_PASS": password})
        return self.occ("user:auth-tokens:add", user).strip().splitlines()[-1].strip()

    def app_tokens(self, user: str) -> dict[int, str]:
        """The user's app passwords and OAuth2 app tokens as Nextcloud keeps them: id -> name
        (browser sessions, type 0, left out). Read from its database, the rows `occ
        user:auth-tokens:list` lists (its user, token version 2), without starting a PHP for it."""
        database = self.dir / "data" / "owncloud.db"
        with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
            rows = db.execute(
                "SELECT id, name FROM oc_authtoken WHERE uid = ? AND version = 2 AND type = 1", (user,)
            ).fetchall()
        return {int(token): str(name) for token, name in rows}

    def log_tail(self, lines: int = 40) -> str:
        path = Path(self.config["logs"]["nextcloud"])
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


def _running(pid_file: Path, config: Path) -> int | None:
    """The pid in `pid_file` if that process runs with `config` (as the kit checks), else None."""
    with contextlib.suppress(OSError, ValueError):
        pid = int(pid_file.read_text().strip())
        if str(config).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
    return None


def _tail(path: Path, offset: int) -> bytes:
    with contextlib.suppress(FileNotFoundError), path.open("rb") as file:
        file.seek(offset)
        return file.read()
    return b""


def _copy(source: Path, target: Path) -> None:
    """`cp -a`, as the kit copies: owners (www-data), modes and times kept."""
    subprocess.run(["/bin/cp", "-a", str(source), str(target)], check=True, capture_output=True, timeout=300)
