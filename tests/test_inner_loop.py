"""The list of what `make test-fast` leaves out (tests/inner_loop.py) names only tests there are:
a renamed file would silently come back into the inner loop."""

from __future__ import annotations

import re
from pathlib import Path

from tests.inner_loop import SLOW

ROOT = Path(__file__).resolve().parent.parent


def test_every_slow_entry_exists() -> None:
    assert SLOW
    for entry in SLOW:
        path, _, name = entry.partition("::")
        assert (ROOT / path).is_file(), entry
        if name:
            assert re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text(), re.MULTILINE), entry
