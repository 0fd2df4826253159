"""The package's rooms import one way (issue 29): no module imports another that imports it back,
directly or around a circle, and no import runs from a lower room up to a higher one. Every import
counts: at the top, under `TYPE_CHECKING`, and inside a function (an import inside a function is
for start-up cost only, never a way around a circle)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "nextcloud_mcp_server"
ROOT = "nextcloud_mcp_server"
# Top to bottom: a room may import its own modules and those of any room below it.
ROOMS: list[tuple[str, ...]] = [
    ("__main__", "cli", "app", "server"),  # the composition
    ("web",),  # the HTTP front
    ("tools", "completions", "resources", "views"),
    ("icons",),  # the package's own icons (data only)
    ("runtime", "diagnostics"),  # process-wide resources, the check of Nextcloud
    ("authz",),  # our own authorization server
    ("auth",),  # the resource server, consent
    ("storage",),
    ("config", "logs"),
    ("inbound",),  # who is calling, the redirect-URI policy, the page kit
    ("toolsets",),  # the registry and each toolset's declaration: plain data
    ("nextcloud",),  # the Nextcloud client: knows nothing of MCP
    ("outbound",),  # bounded HTTP for every upstream
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            wanted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            wanted = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        targets.update(t for t in wanted if t in known and t != name)
    return targets


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: _imports(name, path, known) for name, path in known.items()}


def _room(module: str) -> int | None:
    """The room's depth (0: the top), or None for the package itself (its version)."""
    if module == ROOT:
        return None
    first = module.split(".")[1]
    return next(depth for depth, names in enumerate(ROOMS) if first in names)


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_belongs_to_a_room() -> None:
    rooms = {name for names in ROOMS for name in names}
    loose = sorted({m.split(".")[1] for m in _modules() if m != ROOT} - rooms)
    assert loose == [], f"modules or packages in no room: {loose}"


def test_no_module_imports_around_a_circle() -> None:
    assert _circles(_graph()) == []


def test_no_import_runs_from_a_lower_room_up() -> None:
    upward = []
    for module, targets in _graph().items():
        here = _room(module)
        for target in targets:
            there = _room(target)
            if here is not None and there is not None and there < here:
                upward.append(f"{module} -> {target}")
    assert sorted(upward) == []


def test_the_checks_see_a_circle_and_an_upward_import() -> None:
    """The checks themselves: a made-up circle and a made-up upward arrow are caught."""
    graph = {f"{ROOT}.auth.a": {f"{ROOT}.authz.b"}, f"{ROOT}.authz.b": {f"{ROOT}.auth.a"}}
    assert _circles(graph) == [[f"{ROOT}.auth.a", f"{ROOT}.authz.b"]]
    assert _room(f"{ROOT}.auth.a") > _room(f"{ROOT}.authz.b")  # type: ignore[operator]
