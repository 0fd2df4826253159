"""Every benchmark script loads: a name moved in one script (a helper renamed by one change, still
imported by another) fails here, not at the start of a forty-minute seeding. Each is run in a
fresh interpreter with the same path the scripts set up for themselves; nothing is measured."""

from __future__ import annotations

import json
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


# each script loaded in its own runpy namespace, one interpreter per folder (the path the folder's
# scripts set up for themselves, so each name resolves as it would alone); every failure printed
_LOAD_ALL = """
import json, runpy, sys, traceback
folder, bench, root, scripts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
sys.path[:0] = [folder, bench, root]
failed = {}
for script in scripts:
    try:
        runpy.run_path(script, run_name="loaded_by_test")
    except BaseException:
        failed[script] = traceback.format_exc()[-1500:]
print(json.dumps(failed))
"""


@pytest.mark.parametrize(
    "folder", sorted({p.parent for p in SCRIPTS}), ids=lambda p: str(p.relative_to(ROOT)) or "."
)
def test_every_benchmark_script_of_a_folder_loads(folder: Path, tmp_path: Path) -> None:
    """One fresh interpreter per folder instead of one per script: the same imports, a second
    each instead of forty (ADR 0086)."""
    scripts = [str(p) for p in SCRIPTS if p.parent == folder]
    manifest = tmp_path / "manifest.json"  # what the MCP floor reads as it loads (measure.py writes it)
    manifest.write_text("{}")
    env = {**os.environ, "BENCH_MANIFEST": str(manifest)}
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_ALL, str(folder), str(ROOT / "bench"), str(ROOT), *scripts],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    failed = json.loads(done.stdout.strip().splitlines()[-1])
    assert failed == {}, "\n".join(f"{script}:\n{trace}" for script, trace in failed.items())
