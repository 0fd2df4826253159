"""The rule of `tests/targets.py` that spreads a flow's forms over the real 29 and 34 (ADR 0079)."""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
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
    fixture_params: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def _fixtureinfo(self) -> Any:
        """As pytest keeps a parametrized fixture's params: the last definition's `params`."""
        definitions = {n: [SimpleNamespace(params=p)] for n, p in self.fixture_params.items()}
        return SimpleNamespace(name2fixturedefs=definitions)

    def iter_markers(self, name: str) -> list[pytest.Mark]:
        return [m for m in self.markers if m.name == name]


def test_every_spread_test_exists() -> None:
    """A renamed test would silently run on both again: the table names only tests there are."""
    for test in SPREAD:
        path, name = test.split("::")
        assert re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text(), re.MULTILINE), test


def test_each_form_runs_on_one_real_version_and_each_value_meets_both() -> None:
    tools, changes = ["delete", "write", "move"], ["edited", "renamed"]
    markers = [pytest.mark.parametrize("change", changes).mark, pytest.mark.parametrize("tool", tools).mark]
    items = [
        _Item(
            f"{TEST}[{target}-{tool}-{change}]",
            _CallSpec({"nextcloud": target, "tool": tool, "change": change}, {}),  # indices unused
            markers,
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
        _Item(f"tests/x.py::test_y[{t}-a]", _CallSpec({"nextcloud": t, "f": "a"}, {}))
        for t in ("real", "real34")
    ]
    assert spread_over_versions(cast(list[pytest.Item], items)) == []


def test_names_declared_together_count_once() -> None:
    """("change", "said") rows: the row's position once, so three rows go 29, 34, 29."""
    rows = [({"status": "CANCELLED"}, "cancel it"), ({"description": ""}, "blank it"), ({"summary": ""}, "x")]
    marker = pytest.mark.parametrize(("change", "said"), rows).mark
    items = [
        _Item(
            f"{TEST}[{t}-{i}]",
            _CallSpec({"nextcloud": t, "change": c, "said": w}, {"nextcloud": 0, "change": i, "said": i}),
            [marker],
        )
        for t in ("real", "real34")
        for i, (c, w) in enumerate(rows)
    ]
    left = {cast(_Item, item).nodeid for item in spread_over_versions(cast(list[pytest.Item], items))}
    assert left == {f"{TEST}[real34-0]", f"{TEST}[real-1]", f"{TEST}[real34-2]"}


def test_a_parametrized_fixture_counts_by_its_params() -> None:
    """`target` (note, event, file) is a fixture's params: note and file on 29, event on 34."""
    kinds = ["note", "event", "file"]
    items = [
        _Item(f"{TEST}[{k}-{t}]", _CallSpec({"target": k, "nextcloud": t}, {}), [], {"target": kinds})
        for k in kinds
        for t in ("real", "real34")
    ]
    left = {cast(_Item, item).nodeid for item in spread_over_versions(cast(list[pytest.Item], items))}
    assert left == {f"{TEST}[note-real34]", f"{TEST}[event-real]", f"{TEST}[file-real34]"}


def test_a_test_without_forms_runs_on_the_one_version_its_name_picks() -> None:
    names = [name for name in SPREAD if "test_sync.py" in name]
    assert len(names) >= 4
    kept = {}
    for name in names:
        items = [_Item(f"{name}[{t}]", _CallSpec({"nextcloud": t}, {})) for t in ("real", "real34")]
        left = {id(item) for item in spread_over_versions(cast(list[pytest.Item], items))}
        assert len(left) == 1, name  # on exactly one real version
        kept[name] = next(i.callspec.params["nextcloud"] for i in items if id(i) not in left)
    assert set(kept.values()) == {"real", "real34"}, kept  # not all on one


_TARGETS = {"nextcloud", "apps_nextcloud", "each_real_nextcloud", "each_real_nextcloud_as_seeded"}


def _real_tests(path: Path) -> set[str]:
    """The tests of a file that meet both real versions unless `SPREAD` says otherwise: they take
    a target fixture and are not marked to run on the double only."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
            arguments = {a.arg for a in node.args.args}
            on_the_double = any(ast.unparse(d) == "ON_THE_DOUBLE" for d in node.decorator_list)
            if arguments & _TARGETS and not on_the_double:
                found.add(node.name)
    return found


def test_every_toolset_still_meets_both_real_versions() -> None:
    """Spreading never takes a toolset off a version: each toolset's folder keeps a test that runs
    on the real 29 and the real 34 (its flow), which `SPREAD` does not name."""
    folders = [p for p in (ROOT / "tests" / "toolsets").iterdir() if p.is_dir() and p.name[0] != "_"]
    assert len(folders) >= 17
    for folder in sorted(folders):
        both = {
            f"{path.relative_to(ROOT)}::{name}"
            for path in folder.glob("test_*.py")
            for name in _real_tests(path)
        } - set(SPREAD)
        assert both, f"{folder.name}: no test left on both real versions"
