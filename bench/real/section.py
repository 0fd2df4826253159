"""A measured section of `make bench-real` beyond the per-tool rounds (the first call in a new
process, requests per tool, ...): measure.py runs every section of its SECTIONS list, in order, on
the same seeded instance after the rounds, keeps each one's results under its name in
bench_real_VERSION.json and prints each one's report and PASS/MISS lines after the rounds' own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cases import Case
from meter import Meter
from seed import Instance

__all__ = ["Context", "Line", "Section"]

Line = tuple[str, bool, str]  # a target's name, whether it holds, the figures


@dataclass(frozen=True)
class Context:
    """What a section gets: the seeded instance and its truth, this server's environment, a
    scratch directory, the meter, the chosen cases and the run's options."""

    instance: Instance
    manifest: dict[str, Any]
    url: str
    password: str  # alice's app password
    env: dict[str, str]  # this server's environment (stdio, alice)
    work: Path
    meter: Meter
    cases: list[Case]
    rounds: int
    with_published: bool


@dataclass(frozen=True)
class Section:
    name: str
    run: Callable[[Context], Awaitable[dict[str, Any]]]
    # this section's results and the whole run's (the rounds' summary among them): printed
    # report, then the target lines
    report: Callable[[dict[str, Any], dict[str, Any]], list[Line]]
