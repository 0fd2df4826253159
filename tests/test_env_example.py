""".env.example documents exactly the variables the server reads: the three required ones set, every
other one commented out with its default, so that `cp .env.example .env` freezes nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nextcloud_mcp_server.config import Settings

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / ".env.example").read_text()
REQUIRED = ["NEXTCLOUD_HOST", "NEXTCLOUD_USERNAME", "NEXTCLOUD_PASSWORD"]


def documented_variables() -> set[str]:
    return set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", TEXT, flags=re.MULTILINE))


def commented() -> list[tuple[str, str]]:
    return re.findall(r'^# ([A-Z][A-Z0-9_]+)=("[^"]*"|\S*)$', TEXT, flags=re.MULTILINE)


def test_every_setting_is_documented_and_nothing_else() -> None:
    """Adding a setting without documenting it (or documenting one that does not exist) fails."""
    read_by_code = {name.upper() for name in Settings.model_fields}
    assert documented_variables() == read_by_code


def test_only_the_required_lines_are_set() -> None:
    assert re.findall(r"^([A-Z][A-Z0-9_]+)=", TEXT, flags=re.MULTILINE) == REQUIRED


def test_the_example_itself_is_a_valid_configuration() -> None:
    """Copying .env.example to .env gives settings that load."""
    settings = Settings(_env_file=ROOT / ".env.example")  # type: ignore[call-arg]
    assert settings.nextcloud_host == "https://cloud.example.com"
    assert settings.problems_for_nextcloud() == []


def _loaded(tmp_path: Path, extra: str) -> Settings:
    required = "\n".join(line for line in TEXT.splitlines() if line.split("=", 1)[0] in REQUIRED)
    path = tmp_path / f"env-{len(extra)}"
    path.write_text(f"{required}\n{extra}\n")
    return Settings(_env_file=path)  # type: ignore[call-arg]


WITH_DEFAULTS = sorted(
    name.upper() for name, field in Settings.model_fields.items() if field.default not in (None, "")
)


@pytest.mark.parametrize("name", WITH_DEFAULTS)
def test_a_setting_with_a_default_shows_it_commented(name: str, tmp_path: Path) -> None:
    """Every setting with a default has a commented line `# NAME=value` whose value, uncommented,
    is that default: uncommenting it changes nothing."""
    shown = [value for found, value in commented() if found == name]
    assert len(shown) == 1, f"{name}: {shown}"
    field = name.lower()
    assert getattr(_loaded(tmp_path, f"{name}={shown[0]}"), field) == getattr(_loaded(tmp_path, ""), field)
