from __future__ import annotations

from pathlib import Path

import pytest

from tests.apps_host import bundle_host


@pytest.fixture(scope="session")
def host_script(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The test host's script, bundled once per session."""
    return bundle_host(tmp_path_factory.mktemp("apps-host"))


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    return tmp_path
