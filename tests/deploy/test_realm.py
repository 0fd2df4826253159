"""The Keycloak realm shipped for the OAuth deployment: the tools' scopes, the clients, the
audience and user claims, the issuer and the placeholders filled from compose."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from nextcloud_mcp_server.auth.scopes import ALL_SCOPES
from nextcloud_mcp_server.config import Settings
from tests.deploy.files import (
    COMPOSE_FILE,
    KEYCLOAK_IMPORT_DIR,
    REALM_FILE,
    compose_variable_of,
    environment,
    mounts,
    placeholder,
    published_ports,
    realm,
    realm_client,
    realm_scopes,
    services,
)

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
