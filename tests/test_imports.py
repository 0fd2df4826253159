"""The package's rooms import one way (issue 29): no module imports another that imports it back,
directly or around a circle, and no import runs from a lower room up to a higher one. Every import
counts: at the top, under `TYPE_CHECKING`, and inside a function (an import inside a function is
for start-up cost only, never a way around a circle).

A toolset's folder (`toolsets/<name>/`, docs/ADR/0052) spans rooms by role: its `__init__.py` holds
only its declaration (the `toolsets` room, plain data); its `tools.py` and `tools_*.py` are in the
tools' room; every other module of it is Nextcloud's side, in the `nextcloud` room, and imports no
MCP or web framework. And the house stays readable: no module over 400 lines, no package over 30%
of the package's lines (each package directory by its own modules; a sub-package counts apart)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from nextcloud_mcp_server.toolsets import NAMES

PACKAGE = Path(__file__).resolve().parents[1] / "nextcloud_mcp_server"
ROOT = "nextcloud_mcp_server"
# Top to bottom: a room may import its own modules and those of any room below it.
ROOMS: list[tuple[str, ...]] = [
    ("__main__", "cli", "app", "server"),  # the composition
    ("web",),  # the HTTP front
    ("tools", "completions", "resources", "views", "prompts"),
    ("icons",),  # the package's own icons (data only)
    ("runtime", "diagnostics"),  # process-wide resources, the check of Nextcloud
    ("authz",),  # our own authorization server
    ("auth",),  # the resource server, consent
    ("index",),  # the find index per user (docs/ADR/0071): below MCP, above the store
    ("storage",),
    ("config", "logs"),
    ("inbound",),  # who is calling, the redirect-URI policy, the page kit
    ("toolsets",),  # the registry and each toolset's declaration: plain data
    ("nextcloud",),  # the Nextcloud client: knows nothing of MCP
    ("outbound",),  # bounded HTTP for every upstream
    ("numbers",),  # whole numbers read from text another party wrote (docs/ADR/0114)
]


TOOLS_ROOM = next(depth for depth, names in enumerate(ROOMS) if "tools" in names)
NEXTCLOUD_ROOM = next(depth for depth, names in enumerate(ROOMS) if "nextcloud" in names)
# Third-party packages Nextcloud's side never imports: it knows nothing of MCP or of serving HTTP.
SERVING = ("mcp", "starlette", "uvicorn")
MAX_LINES = 400
MAX_SHARE = 0.30


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
    """The room's depth (0: the top), or None for the package itself (its version). In a
    toolset's folder the room follows the module's role."""
    if module == ROOT:
        return None
    parts = module.split(".")
    if parts[1] == "toolsets" and len(parts) > 3 and parts[2] != "_declaration":
        leaf = parts[-1]
        return TOOLS_ROOM if leaf == "tools" or leaf.startswith("tools_") else NEXTCLOUD_ROOM
    return next(depth for depth, names in enumerate(ROOMS) if parts[1] in names)


def _third_party(path: Path) -> set[str]:
    """The top-level names of absolute imports outside the package (`mcp`, `aiohttp`, ...)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found - {ROOT}


def _serving_imports(modules: dict[str, Path]) -> list[str]:
    """Modules of the `nextcloud` room that import MCP or a web framework."""
    return sorted(
        f"{name} imports {package}"
        for name, path in modules.items()
        if _room(name) == NEXTCLOUD_ROOM
        for package in _third_party(path) & set(SERVING)
    )


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _too_long(modules: dict[str, Path]) -> set[str]:
    return {name for name, path in modules.items() if _lines(path) > MAX_LINES}


def _package_shares(modules: dict[str, Path]) -> dict[str, float]:
    """Each package directory's own modules' share of all the lines (sub-packages apart)."""
    lines: dict[str, int] = {}
    for path in modules.values():
        folder = path.parent.relative_to(PACKAGE).as_posix()
        lines[folder] = lines.get(folder, 0) + _lines(path)
    total = sum(lines.values())
    return {folder: count / total for folder, count in lines.items()}


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


def test_no_module_is_over_400_lines() -> None:
    assert _too_long(_modules()) == set()


def _installed(part: str) -> bool:
    return part.startswith(".") or part in ("node_modules", "site-packages")


def test_no_test_or_bench_module_is_over_400_lines() -> None:
    """The same bound for the code that tests and measures the package (what is installed there,
    node packages and the published package's virtual environment, apart)."""
    repo = PACKAGE.parent
    found = {
        path.relative_to(repo).as_posix()
        for folder in ("tests", "bench")
        for path in (repo / folder).rglob("*.py")
        if not any(_installed(part) for part in path.relative_to(repo).parts) and _lines(path) > MAX_LINES
    }
    assert found == set()


def test_no_package_holds_over_30_percent_of_the_lines() -> None:
    shares = _package_shares(_modules())
    assert {folder for folder, share in shares.items() if share > MAX_SHARE} == set(), shares


def test_nextcloud_side_imports_no_mcp_nor_web_framework() -> None:
    assert _serving_imports(_modules()) == []


def test_every_toolset_folder_is_in_the_registry_and_declares_itself_only() -> None:
    """A folder under toolsets/ is a toolset of the registry and each name of the registry has
    one; its `__init__.py` imports nothing but the declaration's types."""
    folders = {p.parent.name for p in (PACKAGE / "toolsets").glob("*/__init__.py")}
    assert folders == set(NAMES)
    assert len(NAMES) == len(set(NAMES))
    graph = _graph()
    for name in NAMES:
        module = f"{ROOT}.toolsets.{name}"
        assert graph[module] <= {f"{ROOT}.toolsets._declaration"}, module
        assert _third_party(_modules()[module]) <= {"__future__"}, module
        assert importlib.import_module(module).DECLARATION.name == name
        icons = PACKAGE / "toolsets" / name / "icons"
        assert {p.name for p in icons.glob("*.svg")} == {"light.svg", "dark.svg"}, name


def test_the_new_checks_see_a_made_up_violation(tmp_path: Path) -> None:
    """The checks themselves: a long module, a package too large, Nextcloud's side importing MCP,
    and the rooms of a toolset's modules by role."""
    long = tmp_path / "long.py"
    long.write_text("x = 1\n" * (MAX_LINES + 1))
    short = tmp_path / "short.py"
    short.write_text("import mcp.types\nfrom starlette.responses import Response\nimport aiohttp\n")
    assert _too_long({"a.long": long, "a.short": short}) == {"a.long"}
    assert _third_party(short) == {"mcp", "starlette", "aiohttp"}
    client = f"{ROOT}.toolsets.deck.client"
    assert _serving_imports({client: short}) == [f"{client} imports mcp", f"{client} imports starlette"]
    assert _serving_imports({f"{ROOT}.toolsets.deck.tools": short}) == []
    assert _room(f"{ROOT}.toolsets.deck.tools_answers") == TOOLS_ROOM
    assert _room(f"{ROOT}.toolsets.deck") == _room(f"{ROOT}.toolsets")
    assert _room(f"{ROOT}.toolsets.deck") < NEXTCLOUD_ROOM  # type: ignore[operator]
    shares = _package_shares({"a": PACKAGE / "tools" / "_registry.py", "b": PACKAGE / "auth" / "errors.py"})
    assert set(shares) == {"tools", "auth"}
    assert abs(sum(shares.values()) - 1) < 1e-9
    assert shares["tools"] > MAX_SHARE  # _registry.py is far longer than errors.py
