"""Settings: read once from the environment (and an optional `.env`), validated at start-up
(`settings.py`; the authorization server's own in `auth_server.py`). Every room may read them;
this room imports nothing of the others but `inbound` (forwarded-address trust, the redirect-URI
policy) and `nextcloud.pages`."""

from nextcloud_mcp_server.config.settings import ConfigError, Settings, load_settings

__all__ = ["ConfigError", "Settings", "load_settings"]
