"""The compose services' configuration (every variable documented, secrets without defaults,
settings the server accepts) and the Nextcloud hook that writes the app password, run here."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path, PurePosixPath

import pytest

from tests.deploy.files import (
    COMPOSE_FILE,
    HOOK,
    HOOKS_IN_IMAGE,
    MCP_SERVICES,
    SECRET_NAME,
    compose,
    environment,
    header_variables,
    interpolations,
    mount_of,
    mounts,
    run_settings,
    services,
    strings_in,
)
from tests.test_env_example import documented_variables

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
