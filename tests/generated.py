"""The files written from the toolsets' declarations and the tools: `make docs` writes them
(`python -m tests.generated`), `tests/test_generated.py` fails when one is out of date.

- README.md: the toolset table (`<!-- toolsets:start -->`)
- docs/tools.md: the tool table (`<!-- tools:start -->`) and what `tools/list` costs by default,
  per toolset and with `all` (`<!-- sizes:start -->`, measured by bench/tool_list_size.py)
- docs/clients.md: the views and the tools that link them (`<!-- views:start -->`)
- .env.example: the toolset names in the comments on NEXTCLOUD_MCP_TOOLSETS and the apps' cache
- deploy/keycloak/nextcloud-realm.json: a client scope per scope, and the MCP client's optional scopes
- nextcloud_mcp_server/toolsets/index.json: what the server knows of each tool before importing its
  toolset's tools module (the `ToolEntry` of each `ToolSpec`, docs/ADR/0093)
- nextcloud_mcp_server/toolsets/listing.jsonl: each tool as `tools/list` shows it (but its icons),
  what a server lists until the tool is built (docs/ADR/0093)

The bundle's manifest (packaging/mcpb/build.py) and the test identity providers (tests/oidc.py, which
hands tests/idp/server.mjs its scopes) read the declarations when they run.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # bench/ is no package

from tool_list_size import measure

from nextcloud_mcp_server.server import _tool
from nextcloud_mcp_server.tools import all_tools, toolset_tools
from nextcloud_mcp_server.tools._listing import LISTING_FILE, line
from nextcloud_mcp_server.tools.catalog import markdown_table
from nextcloud_mcp_server.toolsets import INDEX_FILE, NAMES, Declaration, ToolEntry, declarations, scopes

ROOT = Path(__file__).resolve().parents[1]
__all__ = [
    "FILES",
    "clients_page",
    "env_example",
    "index",
    "listing",
    "readme",
    "realm",
    "tools_page",
    "toolset_table",
    "views_table",
]


def _chosen() -> list[Declaration]:
    return [found for found in declarations() if found.chosen]


def toolset_table() -> str:
    """One row per toolset NEXTCLOUD_MCP_TOOLSETS can name."""
    rows = [
        "| toolset | what it offers | in `default` | needs the Nextcloud app | scopes |",
        "|---|---|---|---|---|",
    ]
    for found in _chosen():
        app = f"{found.app.name} (`{found.app.id}`)" if found.app else "none"
        owned = " ".join(f"`{scope.name}`" for scope in found.scopes)
        used = f"those of `{found.scopes_of}`" if found.scopes_of else owned
        default = "yes" if found.default else ""
        rows.append(f"| `{found.name}` | {found.summary} | {default} | {app} | {used} |")
    return "\n".join(rows)


def _between(text: str, marker: str, body: str) -> str:
    pattern = rf"(<!-- {marker}:start -->\n).*?(\n<!-- {marker}:end -->)"
    if not re.search(pattern, text, flags=re.S):
        raise ValueError(f"the file lacks <!-- {marker}:start --> ... <!-- {marker}:end -->")
    return re.sub(pattern, lambda m: m.group(1) + body + m.group(2), text, flags=re.S)


def readme(text: str) -> str:
    return _between(text, "toolsets", toolset_table())


def sizes_table() -> str:
    """Characters of `tools/list` (single-user mode): what a caller reads before enabling any
    toolset on demand, what each toolset adds, and everything at once."""
    default, everything = measure("default"), measure("all")
    rows = [
        "| | tools | characters | without icons |",
        "|---|---|---|---|",
        f"| `default`, as listed before enabling any toolset | {default['tools']} | "
        f"{default['chars']:,} | {default['without_icons']:,} |",
    ]
    for name, entry in everything["per_toolset"].items():
        if name in default["per_toolset"]:
            continue
        rows.append(
            f"| + `{name}` | {entry['tools']} | {entry['chars']:,} | {entry['chars'] - entry['icons']:,} |"
        )
    rows.append(
        f"| `all` | {everything['tools']} | {everything['chars']:,} | {everything['without_icons']:,} |"
    )
    return "\n".join(rows)


def tools_page(text: str) -> str:
    return _between(_between(text, "tools", markdown_table(all_tools())), "sizes", sizes_table())


# What each view shows; a view a tool links that is not here stops `make docs`.
VIEW_WORDS = {
    "ui://nextcloud/agenda.html": "The events by day at their own times (the time zone named once), "
    "and the free slots highlighted among the busy events",
    "ui://nextcloud/approval.html": "Beside every approval question: what it is about, under a heading "
    "that names it (a note's or page's text, a folder's entries, an event, task or contact, a Deck "
    "card or board, a table row, the trash, a version, what a share, comment or post would publish), "
    "times in your locale and time zone",
}


def views_table() -> str:
    """One row per view, with every tool that links it (from the registry)."""
    rows = ["| View | Shown for | What it shows |", "| --- | --- | --- |"]
    linked: dict[str, list[str]] = {}
    for spec in all_tools():
        if spec.view:
            linked.setdefault(spec.view, []).append(f"`{spec.name}`")
    for view, names in sorted(linked.items()):
        rows.append(f"| `{view}` | {', '.join(names)} | {VIEW_WORDS[view]} |")
    return "\n".join(rows)


def clients_page(text: str) -> str:
    return _between(text, "views", views_table())


def _comment(words: str) -> str:
    return "\n".join(textwrap.wrap(words, width=97, initial_indent="# ", subsequent_indent="# ")) + "\n"


def env_example(text: str) -> str:
    """The comments on NEXTCLOUD_MCP_TOOLSETS and NEXTCLOUD_APPS_CACHE_SECONDS name the toolsets."""
    default = ", ".join(found.name for found in _chosen() if found.default)
    apps = [found.name for found in _chosen() if found.app is not None]
    toolsets = _comment(
        f"Which toolsets are offered (comma-separated): default ({default}), all, or names, which "
        f"may include default: default,{apps[0]}"
    )
    cache = _comment(
        f"A toolset of a Nextcloud app ({', '.join(apps)}) is offered only to users for whom the app "
        "is enabled; how long that answer is remembered per user, in seconds (default 300)."
    )
    text, first = re.subn(
        r"(?m)^# Which toolsets are offered(?:.*\n)*?(?=# NEXTCLOUD_MCP_TOOLSETS=)", lambda _: toolsets, text
    )
    apps_comment = r"(?m)^# A toolset of a Nextcloud app(?:.*\n)*?(?=# NEXTCLOUD_APPS_CACHE_SECONDS=)"
    text, second = re.subn(apps_comment, lambda _: cache, text)
    if (first, second) != (1, 1):
        raise ValueError(".env.example lacks the comments on NEXTCLOUD_MCP_TOOLSETS or the apps' cache")
    return text


def _scope(name: str, words: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": words,
        "protocol": "openid-connect",
        "attributes": {
            "include.in.token.scope": "true",
            "display.on.consent.screen": "true",
            "consent.screen.text": words,
        },
    }


def realm(text: str) -> str:
    """Keycloak's realm for docker-compose.yml: a client scope per scope of the server (shown with
    the consent page's words), and every one of them optional for the MCP clients' client."""
    document = json.loads(text)
    ours = {scope.name for scope in scopes()}
    kept = [s for s in document["clientScopes"] if s["name"] not in ours and ":" not in s["name"]]
    document["clientScopes"] = kept + [_scope(scope.name, scope.words) for scope in scopes()]
    for client in document["clients"]:
        optional = client.get("optionalClientScopes", [])
        if any(":" in name for name in optional):  # the client MCP clients use
            kept_names = [name for name in optional if ":" not in name]
            client["optionalClientScopes"] = kept_names + [scope.name for scope in scopes()]
    return _json(document) + "\n"


def _json(value: Any, indent: int = 0) -> str:
    """JSON indented by two; on one line an object of up to three plain values, and a list of
    plain values that fits in 60 characters (the realm file's own style)."""
    if not isinstance(value, dict | list) or not value:
        return json.dumps(value, ensure_ascii=False)
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    key = (lambda k: f"{json.dumps(k, ensure_ascii=False)}: ") if isinstance(value, dict) else (lambda k: "")
    brackets = "{}" if isinstance(value, dict) else "[]"
    if all(not isinstance(v, dict | list) for _, v in items):
        inline = brackets[0] + ", ".join(key(k) + _json(v) for k, v in items) + brackets[1]
        if (len(items) <= 3) if isinstance(value, dict) else (len(inline) <= 60):
            return inline
    inner = " " * (indent + 2)
    lines = [inner + key(k) + _json(v, indent + 2) for k, v in items]
    return brackets[0] + "\n" + ",\n".join(lines) + "\n" + " " * indent + brackets[1]


# The fields of a `ToolEntry` but its toolset (the key it is listed under), in their order.
_ENTRY_FIELDS = [name for name in ToolEntry.__dataclass_fields__ if name != "toolset"]


def index(_: str) -> str:
    """`toolsets/index.json`: per toolset, in the registry's order, each tool's entry as its
    `ToolSpec` says (one line each, so that a diff names the tool that changed)."""
    blocks = []
    for name in NAMES:
        lines = []
        for spec in toolset_tools(name):
            entry = {field: getattr(spec, field) for field in _ENTRY_FIELDS}
            lines.append("    " + json.dumps(entry, ensure_ascii=False))
        blocks.append(f"  {json.dumps(name)}: [\n" + ",\n".join(lines) + "\n  ]")
    return "{\n" + ",\n".join(blocks) + "\n}\n"


def listing(_: str) -> str:
    """`toolsets/listing.jsonl`: every tool of every toolset, in the registry's order, as
    `tools/list` shows it once built (`server._tool`), without its icons."""
    return "".join(line(name, _tool(spec)) + "\n" for name in NAMES for spec in toolset_tools(name))


FILES: dict[str, Callable[[str], str]] = {
    "README.md": readme,
    "docs/tools.md": tools_page,
    "docs/clients.md": clients_page,
    ".env.example": env_example,
    "deploy/keycloak/nextcloud-realm.json": realm,
    f"nextcloud_mcp_server/toolsets/{INDEX_FILE}": index,
    f"nextcloud_mcp_server/toolsets/{LISTING_FILE}": listing,
}


def main() -> int:
    for name, generate in FILES.items():
        path = ROOT / name
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        after = generate(before)
        if after != before:
            path.write_text(after, encoding="utf-8")
            print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
