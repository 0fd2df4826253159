"""The shipped views are what their sources build to, byte for byte, and allow nothing but
themselves: their one inline script and style, by hash (no origin, no eval, no fetch)."""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from nextcloud_mcp_server.views import VIEWS, View, html
from tests.oidc import NODE
from tests.real_nextcloud import REPO

SHIPPED = REPO / "nextcloud_mcp_server" / "views"


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_the_shipped_views_are_what_the_sources_build(tmp_path: Path) -> None:
    """esbuild (pinned) gives the same bytes for the same sources and lockfile: a view edited by
    hand, or sources changed without `make views`, fail here."""
    built = subprocess.run(
        [str(NODE), str(REPO / "views" / "build.mjs"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    for view in VIEWS:
        fresh = (tmp_path / view.file).read_bytes()
        assert fresh == (SHIPPED / view.file).read_bytes(), f"{view.file} is stale: run `make views`"
    assert sorted(p.name for p in SHIPPED.glob("*.html")) == sorted(v.file for v in VIEWS)


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.file)
def test_the_policy_allows_only_the_views_own_script_and_style(view: View) -> None:
    page = html(view)
    [policy] = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    styles = re.findall(r"<style>(.*?)</style>", page, flags=re.S)
    assert len(scripts) == 1
    assert len(styles) == 1
    assert policy.split("; ") == [
        "default-src 'none'",
        f"script-src {_hash(scripts[0])}",
        f"style-src {_hash(styles[0])}",
        "img-src 'none'",
        "connect-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    ]
    # nothing loaded from anywhere, nothing written into the page as markup from data
    assert not re.search(r"<(script|link|img|iframe)[^>]*\b(src|href)=", page, flags=re.I)
    assert len(page) < 450_000  # the App bridge with zod in English only (about 410 kB)
