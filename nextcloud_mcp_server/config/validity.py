"""What makes a configuration usable, decided once for `check` and `run` (docs/ADR/0066).

`check` prints these problems and stops; `run` refuses to serve with them (or, for the Claude
Desktop extension, serves an explanation instead); both say the same words, one line per setting.
What only a Nextcloud can tell (the address answers, the password is right, an app is enabled)
is `check`'s and the server's start-up check's (diagnostics.py), not this module's."""

from __future__ import annotations

from nextcloud_mcp_server.config.settings import ConfigError, Settings
from nextcloud_mcp_server.toolsets import declarations

__all__ = ["chosen_toolsets", "on_demand_toolsets", "problems", "validate"]


def chosen_toolsets(settings: Settings) -> set[str]:
    """The toolsets NEXTCLOUD_MCP_TOOLSETS names: `default`, `all`, or toolset names, which may
    include `default` (`default,deck`). An unknown name is a configuration error naming the known
    ones, not a silently smaller tool list."""
    known = [found.name for found in declarations() if found.chosen]
    default = [found.name for found in declarations() if found.default]
    chosen: set[str] = set()
    for name in settings.toolset_names:
        if name == "all":
            chosen.update(known)
        elif name == "default":
            chosen.update(default)
        elif name in known:
            chosen.add(name)
        else:
            choices = ", ".join(["default", "all", *known])
            raise ConfigError([f"NEXTCLOUD_MCP_TOOLSETS: unknown toolset {name[:40]!r}; known: {choices}"])
    return chosen


def on_demand_toolsets(settings: Settings) -> set[str]:
    """The toolsets a caller may enable for themselves, beyond those listed from the start
    (NEXTCLOUD_MCP_ON_DEMAND, docs/ADR/0070). `auto`: every other toolset when
    NEXTCLOUD_MCP_TOOLSETS names `default` or `all`; none when it names toolsets one by one (an
    administrator who offers Deck alone gets Deck alone, docs/ADR/0060)."""
    listed = chosen_toolsets(settings)
    known = [found.name for found in declarations() if found.chosen]
    names = [name.strip() for name in settings.nextcloud_mcp_on_demand.split(",") if name.strip()]
    wanted: set[str] = set()
    for name in names or ["none"]:
        if name == "auto":
            broad = {"default", "all"} & set(settings.toolset_names)
            wanted.update(known if broad else ())
        elif name == "all":
            wanted.update(known)
        elif name == "none":
            continue
        elif name in known:
            wanted.add(name)
        else:
            choices = ", ".join(["auto", "all", "none", *known])
            raise ConfigError([f"NEXTCLOUD_MCP_ON_DEMAND: unknown toolset {name[:40]!r}; known: {choices}"])
    return wanted - listed


def problems(settings: Settings) -> list[str]:
    """Everything that stops the server from serving with these settings, one line per setting:
    the settings its mode requires (single user: address, login name, password; OAuth: the
    issuer's and the public address's), then the toolsets."""
    found = settings.problems_for_oauth() if settings.oauth_enabled else settings.problems_for_nextcloud()
    try:
        chosen_toolsets(settings)
        on_demand_toolsets(settings)
    except ConfigError as exc:
        found += exc.problems
    return found


def validate(settings: Settings) -> None:
    """Raise `ConfigError` with `problems(settings)`, if there are any."""
    found = problems(settings)
    if found:
        raise ConfigError(found)
