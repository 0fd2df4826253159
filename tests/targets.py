"""Which Nextclouds a test meets (ADR 0068): by default a test that takes `nextcloud` runs on the
double, the real 29 and the real 34. Each real run costs seconds (a reset, a cold first request,
the wait for the shared instance), so cases decided before any request reaches Nextcloud (input
refused, our own bounds and caches) run on the double, with one case of each kind left on the real
ones to show the same end there:

    @ON_THE_DOUBLE
    async def test_a_schema_error_is_one_line(nextcloud: Nextcloud) -> None: ...

    @cases("form", MALFORMED, on_real=["list after"])
    async def test_a_malformed_etag_is_refused(nextcloud: Nextcloud, form: str) -> None: ...

Every toolset still runs its flows (create, read, change, delete) on both real versions. The
forms of one flow (which tool, which change made meanwhile, which kind of item) whose requests are
the same on both versions, and already run on both in the toolsets' flow tests, are spread over
the two (`SPREAD`, ADR 0079): each form on one real version, every value of each parameter on
both, so each form still meets a real Nextcloud and the test meets both versions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

__all__ = ["ON_THE_DOUBLE", "SPREAD", "cases", "spread_over_versions"]

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


# Tests whose forms are spread over the real 29 and 34 (ADR 0079): the flows they vary (what each
# tool asks of Nextcloud) run on both versions in the toolsets' own tests; what the forms add is
# this server's decision (approval, change detected while asking), the same code on both. Forms
# that meet a difference between the versions stay on both: Collectives (another API on 29), Notes
# (4.13 and 6.0 answer differently), the permission levels (the tools offered differ).
_APPROVAL_RACES = "tests/security/test_approval_races.py::"
_APPROVALS = "tests/integration/test_approvals.py::"
_SHARING_RACES = "tests/security/test_races_sharing.py::"
SPREAD = {
    _APPROVAL_RACES + "test_a_talk_post_is_not_sent_after_a_change_while_asked": (
        "Talk's room API v4 on both; the change is detected by comparing what was shown"
    ),
    _APPROVAL_RACES + "test_a_deck_comment_is_not_sent_after_a_change_while_asked": (
        "Deck's REST API on both"
    ),
    _APPROVAL_RACES + "test_a_file_comment_is_not_sent_after_a_change_while_asked": (
        "OCS sharing and WebDAV on both"
    ),
    _APPROVAL_RACES + "test_a_file_is_not_destroyed_after_a_change_while_asked": (
        "WebDAV's ETags and If-Match on both (each tool and each change still on both versions)"
    ),
    _APPROVALS + "test_approving_runs_the_action_after_stating_what_is_destroyed": (
        "the approval is ours; deleting a note, an event and a file run on both in their toolsets"
    ),
    _APPROVALS + "test_declining_or_cancelling_changes_nothing": (
        "the approval is ours; nothing reaches Nextcloud after the answer"
    ),
    _APPROVALS + "test_a_target_changed_while_asking_is_refused_and_kept": (
        "the approval is ours; the change is detected as in the race tests"
    ),
    _APPROVALS + "test_with_approvals_off_the_action_runs_without_asking": (
        "the approval is ours; the actions run on both in their toolsets"
    ),
    _SHARING_RACES + "test_a_file_is_not_shared_after_a_change_while_asked": (
        "OCS sharing and WebDAV on both"
    ),
    _SHARING_RACES + "test_a_share_is_not_changed_or_removed_after_a_change_while_asked": (
        "OCS sharing on both"
    ),
    _SHARING_RACES + "test_a_version_is_not_restored_after_a_rename_while_asked": (
        "files_versions over WebDAV on both"
    ),
    "tests/integration/test_hardening_approvals.py::test_cancelling_or_blanking_an_event_asks": (
        "CalDAV's PUT on both; which change asks is ours"
    ),
    "tests/integration/test_hardening_approvals.py::test_a_file_or_folder_is_replaced_after_approval": (
        "WebDAV's COPY and MOVE with Overwrite on both"
    ),
    "tests/security/test_bound_to_content.py::"
    "test_a_file_rewritten_with_the_same_size_and_time_while_asked_is_left_alone": (
        "WebDAV's ETags and files_versions on both"
    ),
}

# the fixtures whose parameter is the Nextcloud a test meets
TARGET_PARAMETERS = ("nextcloud", "each_real_nextcloud", "apps_nextcloud")


def spread_over_versions(items: list[pytest.Item]) -> list[pytest.Item]:
    """The real runs of `SPREAD`'s tests to leave out: a form runs on the real 29 when the
    positions of its values (each in its parameter's declared list) add up to an even number,
    else on the real 34. Two values of a parameter thus meet both versions, whatever the other
    parameters are. Each run is decided alone: the same whichever tests are selected."""
    left_out = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if item.nodeid.split("[")[0] not in SPREAD or callspec is None:
            continue
        target = next((callspec.params[n] for n in TARGET_PARAMETERS if n in callspec.params), None)
        if target in _REAL and target != _REAL[_position(item, callspec) % 2]:
            left_out.append(item)
    return left_out


_PARAMETER_SET = type(pytest.param(None))  # what `pytest.param(...)` makes


def _position(item: pytest.Item, callspec: Any) -> int:
    """The sum of the positions of the form's values in their declared lists, found by value
    (pytest's own indices count rows across the whole product): one per parametrize (the
    position of the form among that list's distinct forms, so a list declared beside the target,
    as `cases` does, counts by form) and one per parametrized fixture (among its params)."""
    total, counted = 0, set(TARGET_PARAMETERS)
    for marker in item.iter_markers("parametrize"):
        names = marker.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        forms = [n for n in names if n not in TARGET_PARAMETERS]
        if not forms or not set(forms) <= set(callspec.params) or set(forms) & counted:
            continue
        counted.update(forms)
        distinct: list[tuple[object, ...]] = []
        for row in marker.args[1]:
            row_values = row.values if isinstance(row, _PARAMETER_SET) else row if len(names) > 1 else (row,)
            values = dict(zip(names, row_values, strict=True))
            if (form := tuple(values[n] for n in forms)) not in distinct:
                distinct.append(form)
        total += distinct.index(tuple(callspec.params[n] for n in forms))
    for name in callspec.params:
        if name not in counted:  # a parametrized fixture: its own list of params
            definitions = item._fixtureinfo.name2fixturedefs.get(name) or ()
            params = list(definitions[-1].params or ()) if definitions else []
            total += params.index(callspec.params[name])
    return total
