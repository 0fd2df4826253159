"""Which Nextclouds a test meets (ADR 0068): by default a test that takes `nextcloud` runs on the
double, the real 29 and the real 34. Each real run costs seconds (a reset, a cold first request,
the wait for the shared instance), so cases decided before any request reaches Nextcloud (input
refused, our own bounds and caches) run on the double, with one case of each kind left on the real
ones to show the same end there:

    @ON_THE_DOUBLE
    async def test_a_schema_error_is_one_line(nextcloud: Nextcloud) -> None: ...

    @cases("form", MALFORMED, on_real=["list after"])
    async def test_a_malformed_etag_is_refused(nextcloud: Nextcloud, form: str) -> None: ...

Every toolset still runs its flows (create, read, change, delete) on both real versions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

__all__ = ["ON_THE_DOUBLE", "cases"]

_REAL = ("real", "real34")

# the test runs on the double only: what it shows is decided before any request to Nextcloud
ON_THE_DOUBLE = pytest.mark.parametrize("nextcloud", ["double"], indirect=True)


def cases(argnames: str, values: Iterable[Any], *, on_real: Iterable[Any]) -> pytest.MarkDecorator:
    """Parametrize `argnames` (one name, or several "a,b" with tuples as values) with every value
    on the double, and only the values `on_real` on the real 29 and 34 as well."""
    everywhere, real = list(values), list(on_real)
    assert real, "a case on the real ones at least"
    assert all(value in everywhere for value in real), "on_real must be some of the values"
    names = [name.strip() for name in argnames.split(",")]

    def param(target: str, value: Any) -> tuple[Any, ...]:
        return (target, *value) if len(names) > 1 else (target, value)

    params = [param("double", value) for value in everywhere]
    params += [param(target, value) for target in _REAL for value in real]
    return pytest.mark.parametrize(("nextcloud", *names), params, indirect=["nextcloud"])
