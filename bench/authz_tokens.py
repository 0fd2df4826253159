"""The authorization server's token work, in process on a real SQLite store (no HTTP):

1. signing an access token and verifying it the way /mcp does (signature, claims, revocation
   lookup), for ES256 and RS256: median and p95 per operation;
2. a refresh (load, rotate, issue a new pair in the family): median and p95.

    .venv/bin/python bench/authz_tokens.py [--rounds 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nextcloud_mcp_server.authz.keys import SigningKeys  # noqa: E402
from nextcloud_mcp_server.authz.service import open_connection  # noqa: E402
from nextcloud_mcp_server.authz.tokens import Tokens  # noqa: E402
from nextcloud_mcp_server.storage.crypto import Cipher, generate_key  # noqa: E402
from nextcloud_mcp_server.storage.store import SQLiteStore  # noqa: E402

RESOURCE = "https://mcp.example.com/mcp"


def summary(name: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"{name:<28} median {statistics.median(ordered) * 1000:7.3f} ms   p95 {p95 * 1000:7.3f} ms"


async def run(algorithm: str, rounds: int, directory: Path) -> list[str]:
    store = SQLiteStore(directory / f"{algorithm}.sqlite3", Cipher([generate_key()]))
    await store.open()
    try:
        db = await open_connection(store)  # the authorization server's tables, as the runtime migrates them
        keys = SigningKeys(
            db, store.cipher, algorithm=algorithm, max_age_seconds=1e9, token_lifetime_seconds=600
        )
        await keys.load()
        tokens = Tokens(
            db, keys, issuer="https://mcp.example.com/", audiences=[RESOURCE], access_seconds=600,
            refresh_seconds=86400,
        )  # fmt: skip
        answer, _ = await tokens.issue("client", "alice", ["notes:read"], RESOURCE)
        sign, verify, refresh = [], [], []
        refresh_token = answer.refresh_token or ""
        for _ in range(rounds):
            start = time.perf_counter()
            access = tokens._access_token("client", "alice", ["notes:read"], RESOURCE, "family")
            sign.append(time.perf_counter() - start)
            start = time.perf_counter()
            assert await tokens.decode(access) is not None
            verify.append(time.perf_counter() - start)
            start = time.perf_counter()
            loaded = await tokens.load_refresh(refresh_token)
            assert loaded is not None
            rotated = await tokens.rotate(loaded[0], ["notes:read"])
            assert rotated is not None
            refresh.append(time.perf_counter() - start)
            refresh_token = rotated.refresh_token or ""
        return [
            summary(f"{algorithm} sign", sign),
            summary(f"{algorithm} verify + revocation", verify),
            summary(f"{algorithm} refresh (rotate)", refresh),
        ]
    finally:
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for algorithm in ("ES256", "RS256"):
            for line in await run(algorithm, args.rounds, Path(tmp)):
                print(line)


if __name__ == "__main__":
    asyncio.run(main())
