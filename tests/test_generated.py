"""The files written from the toolsets' declarations (`make docs`, tests/generated.py) are current:
adding, renaming or re-scoping a toolset or a tool without `make docs` fails here."""

from __future__ import annotations

import json
import re

import pytest

from nextcloud_mcp_server.toolsets import declarations, scopes
from tests.generated import FILES, ROOT, env_example, realm


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_generated_file_is_current(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    assert FILES[name](text) == text, f"run `make docs`: {name} is out of date"


def test_a_toolset_missing_from_the_env_example_is_seen() -> None:
    """The check itself: a comment that leaves out a toolset is rewritten."""
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    stale = re.sub(
        r"(?m)^# A toolset of a Nextcloud app(?:.*\n)*?(?=# NEXTCLOUD_APPS_CACHE_SECONDS=)",
        "# A toolset of a Nextcloud app (deck) is offered only to users who have it.\n",
        text,
    )
    assert stale != text
    assert env_example(stale) == text


def test_the_realm_offers_every_scope_with_the_consent_pages_words() -> None:
    document = json.loads(realm((ROOT / "deploy/keycloak/nextcloud-realm.json").read_text()))
    found = {s["name"]: s for s in document["clientScopes"]}
    for scope in scopes():
        assert found[scope.name]["attributes"]["consent.screen.text"] == scope.words
    [client] = [c for c in document["clients"] if c["clientId"] == "mcp-client"]
    assert client["optionalClientScopes"] == ["offline_access", *(s.name for s in scopes())]


def test_every_toolset_is_in_the_readme_table() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("<!-- toolsets:start -->", 1)[1].split("<!-- toolsets:end -->", 1)[0]
    for found in declarations():
        assert (f"| `{found.name}` |" in table) == found.chosen, found.name
