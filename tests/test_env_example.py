""".env.example documents exactly the variables the server reads."""

from __future__ import annotations

import re
from pathlib import Path

from nextcloud_mcp_server.config import Settings

ROOT = Path(__file__).resolve().parents[1]


def documented_variables() -> set[str]:
    text = (ROOT / ".env.example").read_text()
    return set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))


def test_every_setting_is_documented_and_nothing_else() -> None:
    """Adding a setting without documenting it (or documenting one that does not exist) fails."""
    read_by_code = {name.upper() for name in Settings.model_fields}
    assert documented_variables() == read_by_code


def test_the_example_itself_is_a_valid_configuration() -> None:
    """Copying .env.example to .env gives settings that load."""
    settings = Settings(_env_file=ROOT / ".env.example")  # type: ignore[call-arg]
    assert settings.nextcloud_host == "https://cloud.example.com"
    assert settings.problems_for_nextcloud() == []
