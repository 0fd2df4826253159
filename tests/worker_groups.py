"""Which pytest-xdist worker runs which tests (ADR 0099): every test of one real Nextcloud version
goes to one worker, so the two workers never wait for each other's instance; any other test goes
with the rest of its file (what `--dist loadfile` did), so module fixtures are made once.

`tests/conftest.py` gives each test its group as an `xdist_group` marker. pytest-xdist's own
`--dist loadgroup` cannot read it under pytest 9 (it renames `item._nodeid`, which pytest 9 no
longer reads), so the groups travel here instead: each worker writes what it collected, `{node id:
group}`, to a directory the controller made, and the controller's scheduler (xdist's load-scope
scheduler, grouping by that map) reads it once every worker has collected. Selected with `--dist
loadgroup`; `-n 0` and the other modes are untouched.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling

_DIRECTORY = "SUITE_WORKER_GROUPS"  # environment: where the workers write their groups


def pytest_configure(config: pytest.Config) -> None:
    """The controller makes the directory before it starts the workers (they inherit it)."""
    if not hasattr(config, "workerinput") and _grouping(config):
        os.environ[_DIRECTORY] = tempfile.mkdtemp(prefix="pytest-worker-groups-")


@pytest.hookimpl(trylast=True)  # after the conftest gave each test its group
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    directory = os.environ.get(_DIRECTORY)
    worker = getattr(config, "workerinput", {}).get("workerid")
    if directory is None or worker is None:
        return
    groups = {item.nodeid: group_of(item) for item in items}
    partial = Path(directory) / f"{worker}.partial"
    partial.write_text(json.dumps(groups))
    partial.rename(partial.with_suffix(".json"))  # whole or absent, never half written


def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadScopeScheduling | None:
    return GroupScheduling(config, log) if _grouping(config) else None


def group_of(item: pytest.Item) -> str:
    """The test's `xdist_group`, else its file."""
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0]) if marker is not None and marker.args else item.nodeid.split("::")[0]


class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no type marker
    """xdist's load-scope scheduling (a group at a time, largest first) over the workers' groups."""

    _groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:  # asked only once every worker has collected
            self._groups = {}
            for written in Path(os.environ[_DIRECTORY]).glob("*.json"):
                self._groups.update(json.loads(written.read_text()))
        return self._groups.get(nodeid) or nodeid.split("::")[0]


def _grouping(config: pytest.Config) -> bool:
    return bool(config.getoption("numprocesses", None)) and config.getoption("dist", None) == "loadgroup"
