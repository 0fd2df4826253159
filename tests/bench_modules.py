"""A benchmark script loaded as a module, for the tests of its pure parts (bench/ is no package:
its scripts run by path)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["BENCH", "load_bench"]

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(relative: str, name: str) -> ModuleType:
    """`bench/<relative>` as the module `name` (kept in sys.modules: dataclasses look their module
    up there)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / relative)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
