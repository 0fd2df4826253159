"""What `make test-fast` leaves out besides the real Nextclouds and the browser (ADR 0086): the
tests that take seconds each on the double alone, because they start processes (the server over
stdio, the TypeScript SDK's client, a fresh virtualenv, every benchmark script) or run many users
for a while. They carry the `slow` marker; `make test` runs them, as CI does, and the inner loop
stays within its 3 minutes. A file or test is named here with what makes it slow; anything that
fails only here shows in `make test`, which is what counts before a merge.
"""

from __future__ import annotations

import pytest

__all__ = ["SLOW"]

# a test file, or a file::test, -> what takes its time
SLOW = {
    "tests/packaging/test_dist.py": "builds the wheel and the sdist, installs them in fresh venvs",
    "tests/packaging/test_mcpb.py": "packs the bundle with the MCPB CLI (Node) and runs it unpacked",
    "tests/packaging/test_icons_packaged.py": "reads the icons out of the built wheel and bundle",
    "tests/tools/test_output_schema.py::"
    "test_the_plain_schema_accepts_exactly_what_pydantic_s_schema_accepts": (
        "900 random instances validated twice for every tool's output schema"
    ),
    "tests/test_icons.py::test_icons_over_stdio": "the server as a process for each toolset",
    "tests/authz/test_ts_sdk_client.py": "the TypeScript SDK's client in Node, through the IdP",
    "tests/integration/test_offline_access.py::test_the_typescript_sdk_client_follows_the_same_flow": (
        "the TypeScript SDK's client in Node"
    ),
    "tests/integration/test_replicas.py": "two server processes, twenty users until tokens expire",
    "tests/integration/test_replicas_2026.py": "two server processes, one killed mid-run",
    "tests/integration/test_demo.py": "the demo as a process, through `make` once",
    "tests/integration/test_double_process.py": "the double as a process",
    "tests/views/test_views_build.py::test_the_shipped_views_are_what_the_sources_build": (
        "the views built again with esbuild (Node)"
    ),
    "tests/test_kit_prepare.py": "the instances' install run by a stand-in kit, in processes",
    "tests/test_cli.py": "the command as a process, several times a test",
    "tests/test_check_and_run_agree.py::test_check_and_run_agree": (
        "`check`, `run` and the extension's server as processes, two or three a case"
    ),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path, _, name = item.nodeid.partition("::")
        if path in SLOW or f"{path}::{name.split('[')[0]}" in SLOW:
            item.add_marker(pytest.mark.slow)
