"""The offline-access store under load.

1. Reading a grant (SQLite + AES-GCM decryption) with 10,000 users stored: median and p95.
2. A warm credential (access token cached in memory): median.
3. Refresh throughput against the test IdP (npm oidc-provider): refresh token -> access token,
   rotated token written back with compare-and-swap; sequential and 50 users at once.

    .venv/bin/python bench/token_store.py [--users 10000] [--reads 5000] [--refresh-users 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nextcloud_mcp_server.auth.caller import Caller  # noqa: E402
from nextcloud_mcp_server.auth.offline import OfflineCredentials  # noqa: E402
from nextcloud_mcp_server.config import load_settings  # noqa: E402
from nextcloud_mcp_server.runtime import Runtime  # noqa: E402
from nextcloud_mcp_server.storage.crypto import generate_key  # noqa: E402
from nextcloud_mcp_server.storage.store import Grant  # noqa: E402
from tests.oidc import running_idp  # noqa: E402


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


async def measure(
    args: argparse.Namespace, issuer: str, refresh_tokens: dict[str, str], client: tuple[str, str], data: Path
) -> dict[str, float]:
    settings = load_settings(
        env_file=None,
        nextcloud_host="http://unused.invalid",
        oidc_issuer=issuer,
        mcp_public_url="http://127.0.0.1:9/mcp",
        oidc_client_id=client[0],
        oidc_client_secret=client[1],
        enable_offline_access=True,
        token_encryption_key=generate_key(),
        store_path=data / "store.sqlite3",
        nextcloud_resource="http://nextcloud.invalid",
    )
    figures: dict[str, float] = {}
    async with Runtime(settings) as runtime:
        store = runtime.store
        assert store is not None
        started = time.perf_counter()
        for i in range(args.users):
            await store.save_grant(
                Grant(f"user{i:05}", f"user{i:05}", "oidc", "refresh_token", f"rt-{i:05}-{'x' * 40}")
            )
        figures["seed_seconds"] = time.perf_counter() - started
        reads = []
        for _ in range(args.reads):
            subject = f"user{random.randrange(args.users):05}"
            started = time.perf_counter()
            grant = await store.get_grant(subject)
            reads.append(time.perf_counter() - started)
            assert grant is not None
        figures["read_median_us"] = statistics.median(reads) * 1e6
        figures["read_p95_us"] = percentile(reads, 0.95) * 1e6

        for user, token in refresh_tokens.items():
            await store.save_grant(Grant(user, user, "oidc", "refresh_token", token))
        credentials = runtime.credentials
        assert isinstance(credentials, OfflineCredentials)
        callers = {u: Caller(subject=u, user_id=u, scopes=frozenset(), token="") for u in refresh_tokens}
        started = time.perf_counter()
        for caller in callers.values():
            await credentials.credential_for(caller)
        sequential = time.perf_counter() - started
        figures["refresh_sequential_per_s"] = len(callers) / sequential
        warm = []
        for _ in range(args.reads):
            caller = random.choice(list(callers.values()))
            started = time.perf_counter()
            await credentials.credential_for(caller)
            warm.append(time.perf_counter() - started)
        figures["warm_credential_median_us"] = statistics.median(warm) * 1e6
        for user in callers:
            credentials.forget(user)
        started = time.perf_counter()
        await asyncio.gather(*(credentials.credential_for(c) for c in callers.values()))
        figures["refresh_concurrent_per_s"] = len(callers) / (time.perf_counter() - started)
        figures["refreshes"] = sum(credentials.refreshes.values())
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--reads", type=int, default=5_000)
    parser.add_argument("--refresh-users", type=int, default=50)
    args = parser.parse_args()
    with running_idp(ROTATE_REFRESH="1") as idp, tempfile.TemporaryDirectory() as data:
        redirect = "http://127.0.0.1:9/oauth/callback-nextcloud"
        client = idp.register_confidential(redirect)
        refresh_tokens = {
            f"rider{i:03}": idp.token(
                user=f"rider{i:03}",
                resource="http://nextcloud.invalid",
                scope="profile",
                client_id=client[0],
                client_secret=client[1],
                redirect_uri=redirect,
                offline=True,
            )["refresh_token"]
            for i in range(args.refresh_users)
        }
        figures = asyncio.run(measure(args, idp.issuer, refresh_tokens, client, Path(data)))
    print(f"{args.users} grants stored in {figures['seed_seconds']:.1f} s")
    print(
        f"grant read (SQLite + AES-GCM) at {args.users} users: median {figures['read_median_us']:.0f} us, "
        f"p95 {figures['read_p95_us']:.0f} us (target: median under 1000 us)"
    )
    print(f"warm credential (cached access token): median {figures['warm_credential_median_us']:.1f} us")
    print(
        f"refresh against the IdP: {figures['refresh_sequential_per_s']:.0f}/s one at a time, "
        f"{figures['refresh_concurrent_per_s']:.0f}/s with {args.refresh_users} users at once"
    )
    (ROOT / "bench" / "results" / "token_store.json").write_text(json.dumps(figures, indent=2))
    return 0 if figures["read_median_us"] < 1000 else 1


if __name__ == "__main__":
    raise SystemExit(main())
