"""The suite's own xdist scheduling (ADR 0099): a group's tests run on one worker, any other test
with the rest of its file; checked by running pytest on two workers over a small tree of tests
that record which worker ran them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.real_nextcloud import REPO

_CONFTEST = """
import json, os, pytest
pytest_plugins = ("tests.worker_groups",)

def pytest_collection_modifyitems(items):
    for item in items:
        if "nc29" in item.name:
            item.add_marker(pytest.mark.xdist_group("nextcloud-29"))

@pytest.fixture(autouse=True)
def _where(request):
    yield
    with open(os.environ["RAN_ON"], "a") as out:
        out.write(json.dumps([request.node.nodeid, os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")
"""


def _tests(name: str) -> str:
    one = "def test_{name}_{n}():\n    pass\n\ndef test_{name}_nc29_{n}():\n    pass\n\n"
    return "".join(one.format(name=name, n=n) for n in range(6))


def test_a_group_runs_on_one_worker_and_a_file_stays_together(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(_CONFTEST)
    for name in ("alpha", "beta", "gamma", "delta"):
        (tmp_path / f"test_{name}.py").write_text(_tests(name))
    ran_on = tmp_path / "ran_on.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n2", "--dist", "loadgroup", "."],
        cwd=tmp_path,
        env={**os.environ, "RAN_ON": str(ran_on), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    workers: dict[str, set[str]] = {}
    for line in ran_on.read_text().splitlines():
        nodeid, worker = json.loads(line)
        group = "nextcloud-29" if "nc29" in nodeid else nodeid.split("::")[0]
        workers.setdefault(group, set()).add(worker)
    assert len(workers) == 5  # the group and four files
    assert all(len(ran) == 1 for ran in workers.values()), workers
    assert len(set().union(*workers.values())) == 2  # and both workers had work
