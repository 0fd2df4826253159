"""What a toolset declares about itself, once (docs/ADR/0052-toolsets-as-slices.md).

Everything else is derived from these declarations: the server's scopes and their consent words,
the app a toolset needs, the `default` set, the icons, the README's toolset table, the toolset
names in `.env.example` and in the Claude Desktop bundle, and the scope lists of the identity
providers the tests and the Keycloak example use. Plain data: this module imports nothing of the
package, so reading the declarations costs nothing at start.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["App", "Declaration", "Scope", "ToolEntry"]


@dataclass(frozen=True)
class App:
    """A Nextcloud app a toolset needs (docs/ADR/0042-toolsets-by-app.md)."""

    id: str  # Nextcloud's app id
    name: str  # as people see it in Nextcloud
    # the first Nextcloud major version whose release of the app has the API the toolset speaks;
    # on an older one the toolset is neither listed nor run (None: every supported version)
    nextcloud_from: int | None = None


@dataclass(frozen=True)
class Scope:
    """An OAuth scope and what it lets a client do, in the words the consent page shows."""

    name: str  # `notes:read`
    words: str  # "Read your notes"


@dataclass(frozen=True)
class Declaration:
    """One toolset, as the rest of the server and its documents know it.

    `scopes` are the scopes this toolset introduces; a toolset that works on another one's data
    names that one in `scopes_of` and declares none (trash, versions, tags and comments use the
    files scopes). `read` and `write` are the scope names its tools declare.
    """

    name: str  # as in NEXTCLOUD_MCP_TOOLSETS and in each tool's `toolset`
    title: str  # as people see it
    summary: str  # one line: what it offers (README, bundle)
    app: App | None = None  # None: Nextcloud's core (and Notes), offered as always
    default: bool = False  # in NEXTCLOUD_MCP_TOOLSETS=default
    scopes: tuple[Scope, ...] = ()
    scopes_of: str | None = None  # the toolset whose scopes this one uses
    # False for the account tools: they manage the caller's own authorization (offline access
    # only, at every level), are not chosen by NEXTCLOUD_MCP_TOOLSETS and reach no Nextcloud API
    chosen: bool = True

    @property
    def scope_owner(self) -> str:
        return self.scopes_of or self.name

    @property
    def read(self) -> str:
        return f"{self.scope_owner}:read"

    @property
    def write(self) -> str:
        return f"{self.scope_owner}:write"


@dataclass(frozen=True, kw_only=True)
class ToolEntry:
    """What the server must know of a tool before its toolset's tools module is imported: the
    list's filters, the scope gate, permission levels, `nc_toolsets`' answers and the views
    (docs/ADR/0093). The tools' own `ToolSpec`s extend it; for the toolsets served on demand it
    comes from `toolsets/index.json`, which `make docs` writes from those `ToolSpec`s."""

    name: str
    toolset: str
    title: str
    scopes: tuple[str, ...]
    read_only: bool
    destructive: bool
    asks: bool = False  # may ask the person in a form although it changes nothing (nc_find's consent)
    view: str | None = None  # the `ui://` MCP Apps view a host shows beside its results

    def allowed_at(self, level: str) -> bool:
        """Permission levels, derived from the annotations: read = read-only tools; write = also
        tools that create or change but never delete or overwrite; destructive = everything."""
        if level == "read":
            return self.read_only
        if level == "write":
            return not self.destructive
        return True
