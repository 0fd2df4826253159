"""The app bench's table (bench/apps/report.py) marks a tool that asks more than its minimum, and
every tool the bench's flows call has a minimum written down (bench/apps/minimum.py)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str) -> ModuleType:
    """A bench module under a name of its own (bench scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"bench_apps_{name}", ROOT / "bench" / "apps" / f"{name}.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MINIMUM: dict[str, tuple[int, str, bool]] = _load("minimum").MINIMUM
table = _load("report").table


def _record(requests: int, error: str | None = None) -> dict[str, Any]:
    return {"wall_s": 0.1, "requests": requests, "asked": ["GET /x"] * requests, "error": error}


def test_a_tool_over_its_minimum_is_marked_and_listed() -> None:
    results = {
        "versions": {"nextcloud": "34.0.1"},
        "load": {"before": [1.0, 1.0, 1.0], "after": [2.0, 2.0, 2.0]},
        "calls": {"nc_talk_react": [_record(1), _record(1)], "nc_talk_mark_read": [_record(2)]},
        "first_calls": [
            {**_record(4), "asked": ["GET /ocs/v2.php/cloud/user", "GET /s", "GET /c", "GET /n"]}
        ],
        "first_call_warm": _record(1),
    }
    text = table(results, MINIMUM)
    react = next(line for line in text.splitlines() if "nc_talk_react" in line)
    read = next(line for line in text.splitlines() if "nc_talk_mark_read" in line)
    assert " ok " in react
    assert "OVER" not in react
    assert "OVER" in read
    assert text.splitlines()[-1] == "over the minimum: nc_talk_mark_read"
    assert "made 3 requests more" in text


def test_every_tool_the_flows_call_has_a_minimum() -> None:
    """A tool added to a flow without its minimum (and the reason) would show as NO MINIMUM."""
    tree = ast.parse((ROOT / "bench" / "apps" / "scenario.py").read_text())
    called = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "call" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                called.add(first.value)
    assert len(called) > 60
    known = {key.split(" (")[0] for key in MINIMUM}
    assert called <= known, called - known
    assert all(least >= 1 and why for least, why, _ in MINIMUM.values())
