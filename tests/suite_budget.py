"""The suite's time beside its budget, and where it went (ADR 0068).

The last lines of a run say how many tests passed on each real Nextcloud, how long tests waited
for a shared one, the time spent per target (the double and everything without a Nextcloud, the
real 29, the real 34: seconds of the workers, setup and teardown included), the test files that
spend the most on the real Nextclouds with those over their budget named, and the wall time
beside the budget: `make test`'s whole run (it exports SUITE_STARTED_AT) or pytest's alone.

The per-file budget is what keeps the suite under its 15 minutes as toolsets are added: edge
cases belong on the double, and the real 29 and 34 get one or two flow tests per toolset.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict

import pytest

__all__ = ["FILE_REAL_BUDGET", "SUITE_BUDGET"]

# seconds on an idle 2-core machine from a fresh clone (issue 40); `make test-fast` sets its own 3 minutes
SUITE_BUDGET = int(os.environ.get("SUITE_BUDGET_SECONDS", "") or 15 * 60)
# Seconds of real-Nextcloud time (29 and 34 together, setup included) one test file may take on an
# idle machine: about forty tests' worth; the whole suite's real-Nextcloud time is about 30 files'.
FILE_REAL_BUDGET = 90.0
_SHOWN = 10  # files listed by their real-Nextcloud time

_BEGAN = time.monotonic()
_RAN: dict[str, int] = {}
_WAITED: list[float] = []
_SPENT: dict[str, float] = defaultdict(float)  # target -> seconds
_REAL_BY_FILE: dict[str, float] = defaultdict(float)  # test file -> seconds on a real Nextcloud


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    properties = dict(report.user_properties)
    version = properties.get("nextcloud")
    if report.when == "call" and report.passed and isinstance(version, str):
        _RAN[version] = _RAN.get(version, 0) + 1
    if report.when == "setup" and isinstance(properties.get("nextcloud_wait"), float):
        _WAITED.append(properties["nextcloud_wait"])
    if isinstance(version, str):
        _SPENT[f"real {version}"] += report.duration
        _REAL_BY_FILE[report.nodeid.split("::")[0]] += report.duration
    else:
        _SPENT["double and no Nextcloud"] += report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    write = terminalreporter.write_line
    if _RAN:
        write(
            "real-Nextcloud tests passed: "
            + ", ".join(f"{n} on Nextcloud {v}" for v, n in sorted(_RAN.items()))
        )
    if _WAITED:
        write(f"waited for a shared real Nextcloud: {sum(_WAITED):.0f} s over {len(_WAITED)} tests")
    if _REAL_BY_FILE:
        write(
            "time per target (worker seconds): "
            + ", ".join(f"{t} {s:.0f} s" for t, s in sorted(_SPENT.items()))
        )
        largest = sorted(_REAL_BY_FILE.items(), key=lambda item: -item[1])
        write(f"real-Nextcloud time per test file (budget {FILE_REAL_BUDGET:.0f} s each on an idle machine):")
        for path, seconds in largest[:_SHOWN]:
            write(f"  {seconds:6.0f} s  {path}" + ("  OVER" if seconds > FILE_REAL_BUDGET else ""))
        over = [path for path, seconds in largest[_SHOWN:] if seconds > FILE_REAL_BUDGET]
        if over:
            write(f"  and {len(over)} more files OVER: " + ", ".join(over))
    took = time.monotonic() - _BEGAN
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    started = os.environ.get("SUITE_STARTED_AT", "")
    if started.isdigit():  # `make test`: from its start (venv, lint, types) to here
        whole = time.time() - int(started)
        verdict = "within" if whole <= SUITE_BUDGET else "OVER"
        write(
            f"make took {_clock(whole)} (pytest {_clock(took)}), {verdict} the budget of "
            f"{_clock(SUITE_BUDGET)} (an idle 2-core machine, fresh clone); load average now {load}"
        )
        return
    verdict = "within" if took <= SUITE_BUDGET else "OVER"
    write(
        f"suite time {_clock(took)}, {verdict} the budget of {_clock(SUITE_BUDGET)} "
        f"(an idle 2-core machine, fresh clone); load average now {load}"
    )


def _clock(seconds: float) -> str:
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"
