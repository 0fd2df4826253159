"""The container deployment's files, read without a Docker engine: docker-compose.yml, the
Dockerfile, the Keycloak realm and deploy/, parsed for the tests beside this module to compare
(the ports, paths, URLs, variables and users they name in several places)."""

from __future__ import annotations

import base64
import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from nextcloud_mcp_server.config import Settings
from tests.test_env_example import documented_variables

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
HOOK = ROOT / "deploy/nextcloud/post-installation/10-mcp.sh"
REALM_FILE = ROOT / "deploy/keycloak/nextcloud-realm.json"

MCP_SERVICES = ("mcp", "mcp-oauth")
HOOKS_IN_IMAGE = PurePosixPath("/docker-entrypoint-hooks.d/post-installation")
KEYCLOAK_IMPORT_DIR = PurePosixPath("/opt/keycloak/data/import")
#: Compose variables holding secrets: never given a default in the compose file.
SECRET_NAME = re.compile(r"PASSWORD|SECRET|KEY")
#: `${VAR}`, `${VAR:-default}`, `${VAR:?message}`, `$VAR` (after `$$` escapes are removed).
COMPOSE_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


# --------------------------------------------------------------------------- compose helpers


@cache
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE_FILE.read_text())
    assert isinstance(loaded, dict)
    return loaded


def services() -> dict[str, dict[str, Any]]:
    found = compose()["services"]
    assert isinstance(found, dict)
    return found


def environment(service: str) -> dict[str, str]:
    env = services()[service].get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {str(k): "" if v is None else str(v) for k, v in env.items()}


def interpolations(value: str) -> list[tuple[str, str]]:
    """(variable, modifier) of each interpolation in a compose value, e.g. ("X", ":?message")."""
    return [(m[0] or m[2], m[1]) for m in COMPOSE_VARIABLE.findall(value.replace("$$", ""))]


def interpolated(value: str, variables: dict[str, str]) -> str:
    """The value as Compose would give it, with these compose-level variables set."""

    def substitute(match: re.Match[str]) -> str:
        return variables[match.group(1) or match.group(3)]

    return COMPOSE_VARIABLE.sub(substitute, value.replace("$$", "\0")).replace("\0", "$")


def strings_in(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from strings_in(key)
            yield from strings_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from strings_in(item)


def header_variables() -> dict[str, str]:
    """`#   NAME - description` lines of the comment block that opens docker-compose.yml."""
    header = []
    for line in COMPOSE_FILE.read_text().splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    return dict(re.findall(r"^#\s+([A-Z][A-Z0-9_]*) - (.*)$", "\n".join(header), flags=re.MULTILINE))


@dataclass(frozen=True)
class Mount:
    source: str
    target: PurePosixPath
    read_only: bool

    @property
    def is_bind(self) -> bool:
        return self.source.startswith((".", "/", "~"))


def mounts(service: str) -> list[Mount]:
    found = []
    for entry in services()[service].get("volumes", []):
        if isinstance(entry, dict):
            found.append(
                Mount(str(entry["source"]), PurePosixPath(entry["target"]), bool(entry.get("read_only")))
            )
        else:
            parts = str(entry).split(":")
            if len(parts) == 1:  # an anonymous volume
                parts.insert(0, "")
            source, target, *mode = parts
            found.append(Mount(source, PurePosixPath(target), "ro" in (mode[0].split(",") if mode else [])))
    return found


def mount_of(service: str, path: PurePosixPath) -> Mount | None:
    """The mount of a service under which a path in its container lies."""
    candidates = [m for m in mounts(service) if path == m.target or m.target in path.parents]
    return max(candidates, key=lambda m: len(m.target.parts), default=None)


@dataclass(frozen=True)
class Port:
    host_ip: str
    published: str
    target: int


def published_ports(service: str) -> list[Port]:
    found = []
    for entry in services()[service].get("ports", []):
        if isinstance(entry, dict):
            found.append(
                Port(str(entry.get("host_ip", "")), str(entry.get("published", "")), int(entry["target"]))
            )
            continue
        text = str(entry).split("/")[0]
        host_ip = ""
        if text.startswith("["):
            host_ip, _, text = text[1:].partition("]:")
        parts = text.split(":")
        if len(parts) == 3:
            host_ip, *parts = parts
        found.append(Port(host_ip, parts[0] if len(parts) == 2 else "", int(parts[-1])))
    return found


def has_healthcheck(service: str) -> bool:
    check = services()[service].get("healthcheck")
    if check is None:
        # An image built from our Dockerfile brings its HEALTHCHECK.
        return "build" in services()[service] and healthcheck_argv() != []
    test = check.get("test")
    return not check.get("disable") and bool(test) and test != ["NONE"]


def healthcheck_text(service: str) -> str:
    test = services()[service]["healthcheck"]["test"]
    return " ".join(test) if isinstance(test, list) else str(test)


# ------------------------------------------------------------------------ Dockerfile helpers


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str


def instructions() -> list[Instruction]:
    logical, pending = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if pending and line.lstrip().startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    parsed = []
    for text in logical:
        keyword, _, arguments = text.strip().partition(" ")
        parsed.append(Instruction(keyword.upper(), arguments.strip()))
    return parsed


def stages() -> list[list[Instruction]]:
    found: list[list[Instruction]] = []
    for instruction in instructions():
        if instruction.keyword == "FROM":
            found.append([])
        assert found, f"{instruction.keyword} before the first FROM"
        found[-1].append(instruction)
    return found


def final_stage() -> list[Instruction]:
    return stages()[-1]


def dockerfile_env() -> dict[str, str]:
    """ENV of the final stage (the `KEY=value` form)."""
    env = {}
    for instruction in final_stage():
        if instruction.keyword == "ENV":
            for word in shlex.split(instruction.arguments):
                assert "=" in word, f"use ENV KEY=value: {instruction.arguments!r}"
                key, _, value = word.partition("=")
                env[key] = value
    return env


def exec_form(instruction: Instruction) -> list[str]:
    argv = json.loads(instruction.arguments)
    assert isinstance(argv, list)
    return [str(a) for a in argv]


def only(keyword: str) -> Instruction:
    found = [i for i in final_stage() if i.keyword == keyword]
    assert found, f"the final stage has no {keyword}"
    return found[-1]


def exposed_ports() -> list[int]:
    return [int(p.split("/")[0]) for i in final_stage() if i.keyword == "EXPOSE" for p in i.arguments.split()]


def healthcheck_argv() -> list[str]:
    found = [i for i in final_stage() if i.keyword == "HEALTHCHECK"]
    if not found:
        return []
    _, _, command = found[-1].arguments.partition("CMD ")
    return exec_form(Instruction("CMD", command.strip()))


def default_mcp_port() -> int:
    return int(dockerfile_env().get("MCP_PORT", "8000"))


def is_pinned(image: str) -> bool:
    """An explicit version: a tag with digits (not `latest`), or a digest."""
    if "@sha256:" in image:
        return True
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:
        return False
    return tag != "latest" and any(c.isdigit() for c in tag)


# ---------------------------------------------------------------------------- realm helpers


@cache
def realm() -> dict[str, Any]:
    loaded = json.loads(REALM_FILE.read_text())
    assert isinstance(loaded, dict)
    return loaded


def realm_client(client_id: str) -> dict[str, Any]:
    found = [c for c in realm().get("clients", []) if c.get("clientId") == client_id]
    assert len(found) == 1, f"the realm should define client {client_id!r} once"
    return found[0]


def realm_scopes() -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in realm().get("clientScopes", [])}


def placeholder(value: str) -> str:
    match = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", value)
    assert match, f"{value!r} should be a ${{VAR}} placeholder, filled from Keycloak's environment"
    return match.group(1)


def compose_variable_of(service: str, key: str) -> str:
    """The compose-level variable a service's environment entry is taken from."""
    found = interpolations(environment(service)[key])
    assert len(found) == 1, f"{service}: {key} should come from one compose variable"
    return found[0][0]


def run_settings(service: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    """The settings the server would load in this service's container (variables made up)."""
    fake = base64.urlsafe_b64encode(bytes(range(32))).decode()
    env = {k: v for k, v in dockerfile_env().items() if k in documented_variables()}
    env |= {
        k: interpolated(v, dict.fromkeys(header_variables(), fake)) for k, v in environment(service).items()
    }
    if "NEXTCLOUD_PASSWORD_FILE" in env:
        (tmp_path / "app-password").write_text("x" * 72 + "\n")
        env["NEXTCLOUD_PASSWORD_FILE"] = str(tmp_path / "app-password")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return Settings(_env_file=None)  # type: ignore[call-arg]
