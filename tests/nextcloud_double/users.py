"""Accounts of the double and how its front door recognises them.

The front door authenticates every request itself (Basic with the login or an app password; later
Bearer tokens), then forwards to the inner WSGI servers (WsgiDAV, Radicale) with an internal
per-user password, so the inner servers enforce per-user isolation as before.
"""

from __future__ import annotations

import base64
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Account", "Accounts", "Caller"]


@dataclass
class Account:
    id: str
    password: str
    display_name: str = ""
    email: str | None = None
    app_passwords: set[str] = field(default_factory=set)
    internal_password: str = field(default_factory=lambda: secrets.token_urlsafe(16))


@dataclass(frozen=True)
class Caller:
    """Who a request authenticated as, and how."""

    user_id: str
    scheme: str  # "basic" or "bearer"
    via_app_password: bool = False
    token: str | None = None


BearerValidator = Callable[[str], str | None]


class Accounts:
    """The double's users; thread-safe, because WSGI servers run requests in threads."""

    def __init__(self, accounts: list[Account], *, login_password_delay: float = 0.0) -> None:
        self._accounts = {a.id: a for a in accounts}
        self._lock = threading.Lock()
        self._bearer_validators: list[tuple[BearerValidator, bool]] = []
        # A real Nextcloud verifies a password hash per request with a login password.
        self.login_password_delay = login_password_delay

    def __getitem__(self, user_id: str) -> Account:
        return self._accounts[user_id]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(self._accounts.values()))

    def add_bearer_validator(self, validator: BearerValidator, *, as_basic_password: bool = False) -> None:
        """Accept Bearer tokens for which `validator(token)` returns a user id. With
        `as_basic_password`, also as the password of Basic auth - which real Nextcloud does for the
        tokens of its own oauth2 app (recorded), not for an external IdP's tokens."""
        self._bearer_validators.append((validator, as_basic_password))

    def add_app_password(self, user_id: str, password: str | None = None) -> str:
        password = password or "-".join(secrets.token_urlsafe(4) for _ in range(5))
        with self._lock:
            self._accounts[user_id].app_passwords.add(password)
        return password

    def revoke_app_password(self, user_id: str, password: str) -> bool:
        with self._lock:
            passwords = self._accounts[user_id].app_passwords
            if password in passwords:
                passwords.discard(password)
                return True
            return False

    def authenticate(self, authorization: str | None) -> Caller | None:
        if not authorization:
            return None
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "basic":
            try:
                user_id, _, password = base64.b64decode(value).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                return None
            account = self._accounts.get(user_id)
            if account is None:
                return None
            if password in account.app_passwords:
                return Caller(user_id, "basic", via_app_password=True, token=password)
            if secrets.compare_digest(password, account.password):
                if self.login_password_delay:
                    time.sleep(self.login_password_delay)
                return Caller(user_id, "basic")
            for validator, as_basic in self._bearer_validators:
                # Nextcloud accepts its own OAuth access tokens as a Basic password.
                if as_basic and validator(password) == user_id:
                    return Caller(user_id, "basic", token=password)
            return None
        if scheme.lower() == "bearer":
            for validator, _ in self._bearer_validators:
                user_id = validator(value)
                if user_id and user_id in self._accounts:
                    return Caller(user_id, "bearer", token=value)
        return None

    def inner_authorization(self, user_id: str) -> str:
        account = self._accounts[user_id]
        raw = f"{account.id}:{account.internal_password}".encode()
        return "Basic " + base64.b64encode(raw).decode()
