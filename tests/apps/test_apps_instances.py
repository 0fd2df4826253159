"""The real Nextclouds with Deck, Talk, Tables and Collectives (`apps_nextcloud`): each app is
enabled for alice and in her navigation (an endpoint every user may read; Collectives names no
capability); the plain instances have none of them."""

from __future__ import annotations

from tests.backends import Nextcloud

APPS = ("deck", "spreed", "tables", "collectives")


def _navigation(nextcloud: Nextcloud) -> set[str]:
    """The ids of the apps in alice's navigation (Collectives names no capability)."""
    with nextcloud.http(nextcloud.alice) as http:
        answer = http.get("/ocs/v2.php/core/navigation/apps", params={"format": "json"})
    answer.raise_for_status()
    return {entry["id"] for entry in answer.json()["ocs"]["data"]}


def test_the_apps_instances_have_the_four_apps(apps_nextcloud: Nextcloud) -> None:
    missing = set(APPS) - _navigation(apps_nextcloud)
    assert not missing, f"{apps_nextcloud.version}: no capabilities for {sorted(missing)}"


def test_the_plain_instances_have_none_of_them(each_real_nextcloud: Nextcloud) -> None:
    assert not set(APPS) & _navigation(each_real_nextcloud), each_real_nextcloud
