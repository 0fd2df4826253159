"""The kit's first install fails one time in 64 when its random admin password begins with "-"
(occ takes it for an option); `Kit.start` makes that install once more, and nothing else."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.real_nextcloud import Kit, KitError

# A stand-in for the kit's script: `start` fails as the kit does until it has failed `fails`
# times, then "installs" (writes nextcloud.json); every call is logged.
_FAKE_KIT = """#!/bin/bash
echo "$*" >> "$(dirname "$0")/calls"
count_file="$(dirname "$0")/failures"
failed=$(cat "$count_file" 2>/dev/null || echo 0)
if [ "$1" = start ]; then
  if [ "$failed" -lt {fails} ]; then
    echo $((failed + 1)) > "$count_file"
    mkdir -p "$2"; touch "$2/half-installed"
    echo '  {message}  ' >&2
    exit 1
  fi
  echo '{{"url": "http://127.0.0.1:1"}}' > "$2/nextcloud.json"
  echo "ready http://127.0.0.1:1 $2/nextcloud.json"
fi
"""


def _kit(tmp_path: Path, fails: int, message: str) -> Kit:
    script = tmp_path / "kit" / "nextcloud"
    script.parent.mkdir()
    script.write_text(_FAKE_KIT.format(fails=fails, message=message))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return Kit(script)


def _calls(kit: Kit) -> list[str]:
    return (kit.script.parent / "calls").read_text().split("\n")[:-1]


def test_a_password_taken_for_an_option_is_installed_again(tmp_path: Path) -> None:
    kit = _kit(tmp_path, 1, 'The "--admin-pass" option requires a value.')
    directory = tmp_path / "instance"
    instance = kit.start("29", directory)
    assert instance.dir == directory
    assert not (directory / "half-installed").exists()  # thrown away before the second install
    assert [call.split()[0] for call in _calls(kit)] == ["start", "stop", "start"]


def test_other_failures_and_a_second_one_are_loud(tmp_path: Path) -> None:
    other = _kit(tmp_path, 1, "occ maintenance:install failed")
    with pytest.raises(KitError, match="maintenance:install failed"):
        other.start("29", tmp_path / "a")
    assert [call.split()[0] for call in _calls(other)] == ["start"]
    (tmp_path / "kit" / "failures").unlink()
    (tmp_path / "kit" / "calls").unlink()
    twice = Kit(other.script)
    other.script.write_text(_FAKE_KIT.format(fails=2, message='The "--admin-pass" option requires a value.'))
    with pytest.raises(KitError, match="admin-pass"):
        twice.start("29", tmp_path / "b")
    assert [call.split()[0] for call in _calls(twice)] == ["start", "stop", "start"]
