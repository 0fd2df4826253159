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

import zlib
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


# Tests whose forms are spread over the real 29 and 34 (ADR 0079, 0086): the flows they vary (what
# each tool asks of Nextcloud) run on both versions in the toolsets' own tests; what the forms add
# is this server's decision (approval, change detected while asking, input refused, a bound, a
# listing kept), the same code and the same requests on both. A test without forms runs on the one
# version its name picks. Forms that meet a difference between the versions stay on both:
# Collectives (another API on 29), Notes (4.13 and 6.0 answer edits and ETags differently), the
# permission levels (the tools offered differ), the calendar (29's ranged REPORT fails, 34's
# birthday calendar), WebDAV names (34 forbids some), the app toolsets (other app releases).
# To add a test: one line under its file, with why its requests are the same on both versions.
def _each(path: str, reason: str, *names: str) -> dict[str, str]:
    return {f"{path}::{name}": reason for name in names}


SPREAD = {
    **_each(
        "tests/security/test_approval_races.py",
        "the change is detected by comparing what was shown; each tool's requests run on both",
        "test_a_talk_post_is_not_sent_after_a_change_while_asked",  # Talk's room API v4 on both
        "test_a_deck_comment_is_not_sent_after_a_change_while_asked",  # Deck's REST API on both
        "test_a_file_comment_is_not_sent_after_a_change_while_asked",  # OCS sharing, WebDAV
        "test_a_file_is_not_destroyed_after_a_change_while_asked",  # WebDAV's ETags and If-Match
    ),
    **_each(
        "tests/integration/test_approvals.py",
        "the approval is ours; deleting a note, an event and a file run on both in their toolsets",
        "test_approving_runs_the_action_after_stating_what_is_destroyed",
        "test_declining_or_cancelling_changes_nothing",
        "test_a_target_changed_while_asking_is_refused_and_kept",
        "test_with_approvals_off_the_action_runs_without_asking",
        "test_a_2026_client_answers_the_form_in_an_input_required_round",
        "test_replacing_asks_only_when_there_is_something_to_replace",
        "test_a_folder_prompt_counts_what_is_inside",
    ),
    **_each(
        "tests/security/test_races_sharing.py",
        "OCS sharing, WebDAV and files_versions on both; the change is detected as in the races",
        "test_a_file_is_not_shared_after_a_change_while_asked",
        "test_a_share_is_not_changed_or_removed_after_a_change_while_asked",
        "test_a_version_is_not_restored_after_a_rename_while_asked",
    ),
    **_each(
        "tests/integration/test_hardening_approvals.py",
        "CalDAV's PUT, WebDAV's COPY and MOVE with Overwrite on both; which change asks is ours",
        "test_cancelling_or_blanking_an_event_asks",
        "test_a_file_or_folder_is_replaced_after_approval",
    ),
    **_each(
        "tests/security/test_bound_to_content.py",
        "WebDAV's ETags and files_versions, PROPFIND listings on both; the bound is ours",
        "test_a_file_rewritten_with_the_same_size_and_time_while_asked_is_left_alone",
        "test_the_chosen_toolsets_bound_resources_listings_and_completions",
    ),
    **_each(
        "tests/integration/test_completions.py",
        "completions are ours, from PROPFIND listings, the Notes list and CardDAV's home on both",
        "test_categories_complete_from_the_users_notes",
        "test_paths_complete_one_folder_level_at_a_time",
        "test_paths_that_could_leave_the_users_files_complete_with_nothing",
        "test_at_most_a_hundred_values",
        "test_categories_come_from_a_bounded_scan",
        "test_a_client_of_the_2026_revision_gets_the_same_values",
        "test_address_books_complete_by_id",
        "test_names_that_hide_what_they_are_are_not_offered",
        "test_completions_over_stdio",
    ),
    **_each(
        "tests/integration/test_resources.py",
        "resources read what the tools read (Notes, WebDAV, CardDAV) on both; the URIs are ours",
        "test_templates_and_a_listing_read_in_pages",
        "test_a_note_reads_as_markdown_with_its_title",
        "test_files_text_inline_binary_as_blob_and_too_large_described",
        "test_a_contact_reads_as_its_vcard",
        "test_uris_that_name_nothing_get_one_clear_error_each",
        "test_a_resource_read_over_stdio",
    ),
    **_each(
        "tests/integration/test_careless_input.py",
        "refused or bounded by us; the reads after (WebDAV, unified search) are the same on both",
        "test_reading_past_the_end_of_a_file_says_so",
        "test_listing_a_file_as_a_folder_says_it_is_a_file",
        "test_text_direction_and_invisible_characters_are_refused_in_names",
        "test_emoji_with_joiners_are_still_fine",
        "test_a_huge_search_query_is_refused_and_never_echoed",
    ),
    **_each(
        "tests/integration/test_ready_at_start.py",
        "our start-up and `check` (status.php, capabilities, one WebDAV request); the version's"
        " own answers are in test_nextcloud_versions.py on both",
        "test_check_takes_an_address_copied_from_the_browser_and_says_which_to_set",
        "test_tools_work_with_an_address_copied_from_the_browser",
        "test_a_wrong_password_is_logged_at_start_and_named_by_the_first_failing_call",
        "test_a_good_configuration_is_logged_at_start",
        "test_run_in_a_terminal_says_what_it_waits_for",
    ),
    **_each(
        "tests/index/test_sync.py",
        "the index's rounds over WebDAV's PROPFIND and ETags (the same on both); notes, whose"
        " ETags differ, stay on both",
        "test_an_unchanged_tree_costs_one_propfind_and_a_deep_change_is_found",
        "test_a_removed_folder_takes_its_items_along",
        "test_a_round_out_of_time_is_incomplete_and_the_next_one_resumes",
        "test_large_text_files_are_read_only_up_to_the_bound",
        "test_hits_nextcloud_no_longer_shows_are_dropped_and_unindexed",
    ),
    **_each(
        "tests/integration/test_find_tools.py",
        "the index is ours, fed by the requests of test_sync.py; the first flow stays on both",
        "test_a_deleted_note_and_file_vanish_from_the_next_answer",
        "test_a_note_and_a_file_added_after_a_complete_round_are_found_at_the_next_call",
        "test_a_second_user_never_sees_the_first_users_items",
        "test_forgetting_removes_the_index_and_the_next_find_rebuilds_it",
        "test_pages_follow_the_cursor_and_a_cursor_of_another_query_is_refused",
        "test_hostile_queries_are_refused_or_answered",
        "test_a_share_revoked_midway_vanishes_for_its_recipient",
    ),
    **_each(
        "tests/integration/test_hardening_paths.py",
        "our escaping of a UID in a CalDAV path; each tool and each UID still meets both",
        "test_a_uid_with_dot_segments_reaches_nothing_outside_the_calendar",
        "test_an_odd_uid_is_no_such_event",
        "test_an_event_whose_uid_has_odd_characters_is_still_found",
    ),
    **_each(
        "tests/integration/test_hardening_versions.py",
        "a malformed ETag or an emptying is refused by us before any request; each kind of item"
        " still meets both",
        "test_a_malformed_etag_is_refused_as_input_and_changes_nothing_at_level_write",
        "test_emptying_a_task_or_a_contact_is_refused_at_level_write",
        "test_emptying_a_task_or_a_contact_asks_only_about_the_current_version",
        "test_a_file_is_replaced_only_with_a_well_formed_etag_even_without_approvals",
        "test_a_delete_with_a_malformed_etag_says_the_etag_is_invalid",
    ),
    **_each(
        "tests/toolsets/files/test_folder_listings.py",
        "the kept listing is ours, confirmed by PROPFIND's ETag on both; paging stays on both",
        "test_a_kept_listing_is_used_only_while_nextcloud_confirms_the_folder_etag",
        "test_a_kept_listing_is_never_given_to_a_credential_nextcloud_refuses",
        "test_a_folder_too_large_to_keep_is_streamed_holding_only_the_page",
        "test_a_long_listing_reports_progress_to_a_client_that_asks",
        "test_a_contact_search_shows_what_get_shows_without_fetching_the_photo",
    ),
    **_each(
        "tests/toolsets/files/test_files_tools.py",
        "WebDAV's GET and PROPFIND on both (the session test covers them); the paging is ours",
        "test_binary_files_come_back_as_blob_resources",
        "test_large_text_is_read_in_pages_that_never_split_a_character",
        "test_a_folder_listing_is_sorted_and_paged",
    ),
    **_each(
        "tests/toolsets/sharing/test_sharing_tools.py",
        "OCS sharing on both (the public link's flow stays on both); what asks is ours",
        "test_refused_share_input_changes_nothing",
        "test_changing_setting_or_removing_a_link_password_asks_and_a_decline_keeps_it",
    ),
    **_each(
        "tests/views/test_views_browser.py",
        "the preview is ours, drawn from PROPFIND, the Notes API and OCS sharing, which the"
        " toolsets' flows run on both; the agenda and free slots (CalDAV) stay on both",
        "test_the_approval_preview_shows_the_folder_about_to_be_deleted",
        "test_the_approval_preview_shows_a_notes_text_and_a_links_target",
    ),
    **_each(
        "tests/toolsets/contacts/test_contacts_tools.py",
        "CardDAV's PUT on both (the contact's flow stays on both); the names and refusals are ours",
        "test_a_line_break_in_a_type_or_a_value_is_refused_and_writes_nothing",
        "test_a_contact_created_with_only_a_full_name_gets_given_and_family_names",
    ),
}

# the fixtures whose parameter is the Nextcloud a test meets
TARGET_PARAMETERS = ("nextcloud", "each_real_nextcloud", "apps_nextcloud")


def spread_over_versions(items: list[pytest.Item]) -> list[pytest.Item]:
    """The real runs of `SPREAD`'s tests to leave out: a form runs on the real 29 when the
    positions of its values (each in its parameter's declared list) add up to an even number,
    else on the real 34. Two values of a parameter thus meet both versions, whatever the other
    parameters are. A test without forms runs on the version its name picks (the parity of its
    CRC-32), so such tests fall about half on each. Each run is decided alone: the same whichever
    tests are selected."""
    left_out = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if item.nodeid.split("[")[0] not in SPREAD or callspec is None:
            continue
        target = next((callspec.params[n] for n in TARGET_PARAMETERS if n in callspec.params), None)
        if target in _REAL and target != _REAL[_version_index(item, callspec)]:
            left_out.append(item)
    return left_out


_PARAMETER_SET = type(pytest.param(None))  # what `pytest.param(...)` makes


def _version_index(item: pytest.Item, callspec: Any) -> int:
    """0 for the real 29, 1 for the real 34."""
    if set(callspec.params) <= set(TARGET_PARAMETERS):  # no forms: the test's name decides
        return zlib.crc32(item.nodeid.split("[")[0].encode()) % 2
    return _position(item, callspec) % 2


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
