"""The pages' building blocks: plain words for scopes, the redirect host a person can check, the
consent form's form-action, and escaping of everything a client chose."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.authz.pages import consent_page, form_action, redirect_host, scope_words


def test_scopes_in_plain_words_in_a_stable_order_and_unknown_ones_as_they_are() -> None:
    words = scope_words(("files:write", "notes.read", "x:unknown", "notes:read"))
    assert words == ["Read your notes", "Upload, change, move and delete your files", "x:unknown"]


@pytest.mark.parametrize(
    ("uri", "host", "action"),
    [
        ("https://claude.ai/api/mcp/auth_callback", "claude.ai", "'self' https://claude.ai"),
        ("http://127.0.0.1:3118/callback?x=1", "127.0.0.1:3118", "'self' http://127.0.0.1:3118"),
        ("https://user:pw@evil.example/cb", "evil.example", "'self' https://evil.example"),
        ("http://[::1]:8080/cb", "[::1]:8080", "'self' http://[::1]:8080"),
        ("com.example.app:/oauth", "com.example.app:", "'self' com.example.app:"),
    ],
)
def test_the_redirect_host_and_form_action(uri: str, host: str, action: str) -> None:
    assert redirect_host(uri) == host
    assert form_action(uri) == action


def test_everything_the_client_chose_is_escaped() -> None:
    page = consent_page(
        action="/oauth/consent",
        request_id="r'><script>",
        csrf="c",
        client_name="<img src=x onerror=alert(1)>",
        client_id="https://evil.example/'\"><b>",
        redirect_uri="https://evil.example/cb",
        scopes=("notes:read", "<i>odd</i>"),
        account="alice",
    )
    body = bytes(page.body).decode()
    assert "<img" not in body
    assert "<script" not in body
    assert "<b>" not in body
    assert "<i>" not in body
    assert "&lt;img src=x onerror=alert(1)&gt;" in body
    assert "value='r&#x27;&gt;&lt;script&gt;'" in body
    assert page.headers["content-security-policy"].count("form-action 'self' https://evil.example;") == 1
