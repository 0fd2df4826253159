"""The rule of `tests/targets.py` that spreads a flow's forms over the real 29 and 34 (ADR 0079)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from tests.targets import SPREAD, spread_over_versions

ROOT = Path(__file__).resolve().parent.parent
TEST = next(iter(SPREAD))


@dataclass
class _CallSpec:
    params: dict[str, Any]
    indices: dict[str, int]


@dataclass
class _Item:
    """What `spread_over_versions` reads of a collected test."""

    nodeid: str
    callspec: _CallSpec
    markers: list[pytest.Mark] = field(default_factory=list)

    def iter_markers(self, name: str) -> list[pytest.Mark]:
        return [m for m in self.markers if m.name == name]


def test_every_spread_test_exists() -> None:
    """A renamed test would silently run on both again: the table names only tests there are."""
    for test in SPREAD:
        path, name = test.split("::")
        assert re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text(), re.MULTILINE), test


def test_each_form_runs_on_one_real_version_and_each_value_meets_both() -> None:
    tools, changes = ["delete", "write", "move"], ["edited", "renamed"]
    items = [
        _Item(
            f"{TEST}[{target}-{tool}-{change}]",
            _CallSpec(
                {"nextcloud": target, "tool": tool, "change": change},
                {"nextcloud": 0, "tool": tools.index(tool), "change": changes.index(change)},
            ),
        )
        for target, tool, change in itertools.product(["double", "real", "real34"], tools, changes)
    ]
    left = set(map(id, spread_over_versions(cast(list[pytest.Item], items))))
    kept = [item.callspec.params for item in items if id(item) not in left]
    assert len(kept) == 12  # six on the double, each of the six forms on one real version
    assert sum(p["nextcloud"] == "double" for p in kept) == 6
    real = [p for p in kept if p["nextcloud"] != "double"]
    assert sorted((p["tool"], p["change"]) for p in real) == sorted(itertools.product(tools, changes))
    for name in ("tool", "change"):
        for value in {p[name] for p in real}:
            assert {p["nextcloud"] for p in real if p[name] == value} == {"real", "real34"}, (name, value)


def test_a_form_declared_beside_the_target_counts_by_its_value_and_not_by_its_row() -> None:
    """`cases` declares the target and the form in one list: the real rows come after the double's."""
    rows = [("double", "accept"), ("double", "decline"), ("real", "decline"), ("real34", "decline")]
    marker = pytest.mark.parametrize(("nextcloud", "answer"), rows).mark
    items = [
        _Item(
            f"{TEST}[{t}-{a}]",
            _CallSpec({"nextcloud": t, "answer": a}, {"nextcloud": i, "answer": i}),
            [marker],
        )
        for i, (t, a) in enumerate(rows)
    ]
    left = spread_over_versions(cast(list[pytest.Item], items))
    assert [cast(_Item, item).nodeid for item in left] == [
        f"{TEST}[real-decline]"
    ]  # "decline" is the 2nd value


def test_tests_not_in_the_table_run_on_both() -> None:
    items = [
        _Item(f"tests/x.py::test_y[{t}-a]", _CallSpec({"nextcloud": t, "f": "a"}, {"nextcloud": 0, "f": 1}))
        for t in ("real", "real34")
    ]
    assert spread_over_versions(cast(list[pytest.Item], items)) == []
