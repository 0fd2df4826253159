"""Background sync of find indexes (docs/ADR/0084), on the double and real PostgreSQL: an unchanged
Nextcloud costs one request per source per round (counted on the double), a round stopped partway
is taken up by a new process without reading again what it had read, two replicas never sync one
user at once (and a replica that dies lets go), a huge source is bounded per round while another
user still syncs, and an index forgotten during a round is not refilled by it."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest

from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.index.background import BackgroundSync
from nextcloud_mcp_server.index.engine import Filters
from nextcloud_mcp_server.index.postgres import PostgresIndex
from nextcloud_mcp_server.index.query import parse_query
from nextcloud_mcp_server.index.service import FindService, limits_of
from nextcloud_mcp_server.index.sqlite import SQLiteIndex
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from tests.backends import Login, Nextcloud
from tests.conftest import ADMIN_APP_PASSWORD, ADMIN_PASSWORD, ALICE_APP_PASSWORD, ALICE_PASSWORD
from tests.nextcloud_double import NextcloudDouble
from tests.postgres import PostgresCluster

pytestmark = pytest.mark.integration


def _settings(nextcloud: Nextcloud, tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(
        env_file=None,
        nextcloud_host=nextcloud.url,
        nextcloud_username="admin",
        nextcloud_password=nextcloud.admin.app_password,
        store_path=tmp_path / "store.sqlite3",
        find_meaning="off",
        **overrides,
    )


class Users:
    """The users a background sync keeps current, each with a client of their own."""

    def __init__(self, nextcloud: Nextcloud, *logins: Login) -> None:
        self.http = NextcloudHTTP(nextcloud.url)
        self.logins = {f"nextcloud:{login.user}": login for login in logins}
        self.wanted = set(self.logins)
        self.clients: dict[str, NextcloudClient] = {}  # as the runtime keeps what it discovered

    async def users(self, limit: int) -> list[str]:
        return sorted(self.wanted)[:limit]

    async def still(self, user: str) -> bool:
        return user in self.wanted

    async def client_for(self, user: str) -> NextcloudClient:
        login = self.logins[user]
        if user not in self.clients:
            self.clients[user] = NextcloudClient(self.http, BasicCredential(login.user, login.app_password))
        return self.clients[user]

    def sync(self, service: FindService, *, round_seconds: float = 60.0, at_once: int = 2) -> BackgroundSync:
        return BackgroundSync(
            service,
            self.users,
            self.still,
            self.client_for,
            every=30.0,
            round_seconds=round_seconds,
            at_once=at_once,
            limits=limits_of(service.settings),
        )


async def _keys(service: FindService, user: str, query: str) -> set[str]:
    index = await service.index()
    return {h.key for h in await index.search(user, parse_query(query), Filters(), limit=50)}


def _sources(double: NextcloudDouble, since: int) -> Counter[str]:
    """The requests made since `since`, by the source they serve."""
    counted: Counter[str] = Counter()
    for request in list(double.requests)[since:]:
        path = request.path
        if path.startswith("/remote.php/dav/calendars/"):
            counted["calendars"] += 1
        elif path.startswith("/remote.php/dav/addressbooks/"):
            counted["contacts"] += 1
        elif path.startswith("/remote.php/dav/files/"):
            counted["notes and files"] += 1
        elif "/apps/deck/" in path:
            counted["deck"] += 1
        elif "collectives" in path:
            counted["collectives"] += 1
        else:
            counted[f"other {request.method} {path}"] += 1
    return counted


async def test_an_unchanged_nextcloud_costs_one_request_per_source_and_a_change_is_read(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    """After a complete background round, the next costs exactly one request per source (counted
    on the double); a file changed in Nextcloud is then found without any call of the person."""
    nextcloud = Nextcloud("double", double_url, *_logins(), double=double)
    nextcloud.put_file(nextcloud.admin, "Deep/a/plan.md", b"the heron plan")
    users = Users(nextcloud, nextcloud.admin)
    service = FindService(_settings(nextcloud, tmp_path))
    sync = users.sync(service)
    try:
        (first,) = await sync.pass_once()
        assert first.round is not None
        assert first.round.complete, first
        assert await _keys(service, "nextcloud:admin", "heron") == {"Deep/a/plan.md"}
        await sync.pass_once()  # the first round's Notes settings made the notes folder: read again
        before = len(double.requests)
        (unchanged,) = await sync.pass_once()
        counted = _sources(double, before)
        assert unchanged.round is not None
        assert unchanged.round.read == 0
        assert counted == Counter(
            {"notes and files": 1, "calendars": 1, "contacts": 1, "deck": 1, "collectives": 1}
        ), counted
        nextcloud.put_new_version(nextcloud.admin, "Deep/a/plan.md", b"the egret plan")
        (changed,) = await sync.pass_once()
        assert changed.round is not None
        assert changed.round.read == 1
        assert await _keys(service, "nextcloud:admin", "egret") == {"Deep/a/plan.md"}
        assert await _keys(service, "nextcloud:admin", "heron") == set()
    finally:
        await service.close()
        await users.http.aclose()


def _logins() -> tuple[Login, Login]:
    return (
        Login("admin", ADMIN_PASSWORD, ADMIN_APP_PASSWORD, display_name="Admin"),
        Login("alice", ALICE_PASSWORD, ALICE_APP_PASSWORD, display_name="Alice"),
    )


async def test_a_round_stopped_partway_is_taken_up_by_a_new_process(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    """A round that stops partway (here Nextcloud fails on one folder, as a process killed there
    would leave it) keeps what it read; a new process, with a new service on the same index, reads
    only what is left: the folder that failed, not the one already indexed."""
    nextcloud = Nextcloud("double", double_url, *_logins(), double=double)
    for name in ("one", "two", "three"):
        nextcloud.put_file(nextcloud.admin, f"Aa/{name}.md", b"finch " + name.encode())
        nextcloud.put_file(nextcloud.admin, f"Zz/{name}.md", b"finch " + name.encode())
    users = Users(nextcloud, nextcloud.admin)
    settings = _settings(nextcloud, tmp_path)
    double.inject("PROPFIND", "/remote.php/dav/files/admin/Zz", 500, 500, 500, 500)
    stopped = FindService(settings)
    try:
        (first,) = await users.sync(stopped).pass_once()
        assert first.round is not None
        assert not first.round.complete
        assert len(await _keys(stopped, "nextcloud:admin", "finch")) == 3  # Aa's, read
    finally:
        await stopped.close()  # the process ends
    double.injected.clear()
    restarted = FindService(settings)
    try:
        before = len(double.requests)
        (resumed,) = await users.sync(restarted).pass_once()
        files = "/remote.php/dav/files/"
        read = sorted(r.path for r in list(double.requests)[before:] if r.method == "GET" and files in r.path)
        assert resumed.round is not None
        assert resumed.round.complete
        assert len(await _keys(restarted, "nextcloud:admin", "finch")) == 6
        assert read == [f"/remote.php/dav/files/admin/Zz/{n}.md" for n in ("one", "three", "two")]
    finally:
        await restarted.close()
        await users.http.aclose()


async def test_a_huge_source_is_bounded_per_round_and_another_user_still_syncs(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    """One user's hostile folder of many files cannot hold the pass: each of their rounds stops at
    its time bound (and records only what it finished), the other user's round runs in the same
    pass, and later passes go on where the last stopped until the folder is complete."""
    nextcloud = Nextcloud("double", double_url, *_logins(), double=double)
    huge = double.user_files("admin") / "Flood"
    huge.mkdir(parents=True)
    for number in range(1500):
        (huge / f"{number:04}.md").write_text(f"flood item {number}")
    nextcloud.put_file(nextcloud.alice, "mine.md", b"alice owns a kestrel")
    users = Users(nextcloud, nextcloud.admin, nextcloud.alice)
    service = FindService(_settings(nextcloud, tmp_path))
    sync = users.sync(service, round_seconds=0.05, at_once=1)
    try:
        outcomes = {o.user: o for o in await sync.pass_once()}
        admin, alice = outcomes["nextcloud:admin"], outcomes["nextcloud:alice"]
        assert admin.round is not None
        assert not admin.round.complete
        assert admin.round.read < 1500
        assert alice.round is not None  # its turn came, bounded as well
        sync.round_seconds = 60.0  # the bound lifted, the next rounds go on, never from scratch
        counts = [admin.round.read]
        deadline = time.monotonic() + 120
        while True:
            outcome = next(o for o in await sync.pass_once() if o.user == "nextcloud:admin")
            assert outcome.round is not None
            counts.append(outcome.round.read)
            if outcome.round.complete or time.monotonic() > deadline:
                break
        assert outcome.round.complete
        assert sum(counts) == 1500  # every file read once over the rounds
        assert await _keys(service, "nextcloud:alice", "kestrel") == {"mine.md"}
        assert await _keys(service, "nextcloud:admin", "kestrel") == set()
    finally:
        await service.close()
        await users.http.aclose()


async def test_an_index_forgotten_during_a_round_is_not_refilled_by_it(
    double: NextcloudDouble, double_url: str, tmp_path: Path
) -> None:
    """The person withdraws (or their grant is revoked) while their round reads: what the round
    read is deleted when it ends, and the next pass does not sync them."""
    nextcloud = Nextcloud("double", double_url, *_logins(), double=double)
    nextcloud.put_file(nextcloud.admin, "a.md", b"the plover")
    users = Users(nextcloud, nextcloud.admin)
    service = FindService(_settings(nextcloud, tmp_path))
    real_client_for = users.client_for

    async def withdrawn_meanwhile(user: str) -> NextcloudClient:
        users.wanted.discard(user)
        await service.forget(user)
        return await real_client_for(user)

    users.client_for = withdrawn_meanwhile  # type: ignore[method-assign]
    sync = users.sync(service)
    try:
        (outcome,) = await sync.pass_once()
        assert outcome.skipped == "no longer wanted"
        assert (await (await service.index()).status("nextcloud:admin")).items == {}
        assert await sync.pass_once() == []
    finally:
        await service.close()
        await users.http.aclose()


async def test_two_replicas_never_sync_one_user_at_once(postgres: PostgresCluster) -> None:
    """Two replicas on one PostgreSQL index: while one holds a user's round, the other is told no
    (without waiting), other users are free; a replica that dies mid-round lets go with its
    session, so a restart takes the user up again at once."""
    with postgres.database() as url:
        first, second = PostgresIndex(url), PostgresIndex(url)
        await first.open()
        await second.open()
        try:
            async with first.hold("alice") as held:
                assert held
                async with second.hold("alice") as contended, second.hold("bob") as other:
                    assert (contended, other) == (False, True)
            async with second.hold("alice") as after:
                assert after
            # a replica dies while holding a user: its session ends, and so does its lock
            holding = first.hold("alice")
            assert await holding.__aenter__()
            with psycopg.connect(url, autocommit=True) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                    "AND pid != pg_backend_pid()"
                )
            deadline = time.monotonic() + 30
            while True:
                async with second.hold("alice") as taken:
                    if taken or time.monotonic() > deadline:
                        break
                await asyncio.sleep(0.05)
            assert taken
            await holding.__aexit__(None, None, None)  # its own end finds the session gone: no error
        finally:
            await first.close()
            await second.close()


async def test_sqlite_holds_one_round_per_user_in_its_process(tmp_path: Path) -> None:
    """One process per SQLite file: a user's round under way is not started twice."""
    index = SQLiteIndex(tmp_path / "find-index.sqlite3")
    async with index.hold("alice") as held, index.hold("alice") as again, index.hold("bob") as other:
        assert (held, again, other) == (True, False, True)
    async with index.hold("alice") as after:
        assert after
