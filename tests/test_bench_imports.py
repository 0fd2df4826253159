"""Every benchmark script loads: a name moved in one script (a helper renamed by one change, still
imported by another) fails here, not at the start of a forty-minute seeding. Each is run in a
fresh interpreter with the same path the scripts set up for themselves; nothing is measured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (ROOT / "bench", ROOT / "bench" / "real", ROOT / "bench" / "apps")
SCRIPTS = sorted(p for folder in FOLDERS for p in folder.glob("*.py"))


def test_the_benchmark_scripts_are_found() -> None:
    names = {p.name for p in SCRIPTS}
    assert {"run_all.py", "measure.py", "find_measure.py", "find_seed.py", "seed.py"} <= names
    assert {"apps/measure.py", "apps/minimum.py", "apps/scenario.py"} <= {
        str(p.relative_to(ROOT / "bench")) for p in SCRIPTS
    }


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT / "bench")))
def test_a_benchmark_script_loads(script: Path, tmp_path: Path) -> None:
    code = (
        "import runpy, sys; "
        f"sys.path[:0] = [{str(script.parent)!r}, {str(ROOT / 'bench')!r}, {str(ROOT)!r}]; "
        f"runpy.run_path({str(script)!r}, run_name='loaded_by_test')"
    )
    manifest = tmp_path / "manifest.json"  # what the MCP floor reads as it loads (measure.py writes it)
    manifest.write_text("{}")
    env = {**os.environ, "BENCH_MANIFEST": str(manifest)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
