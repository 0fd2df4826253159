"""`completion/complete` through the SDK's client against the double and the real Nextclouds:
calendar ids, note categories and paths, one folder level at a time, bounded, per caller."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from mcp import Client, ClientSession
from mcp.types import Completion, PromptReference, ResourceTemplateReference

from nextcloud_mcp_server.completions import _sources as sources
from nextcloud_mcp_server.config import Settings, load_settings
from nextcloud_mcp_server.resources import ONE_CALENDAR_TEMPLATE
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, stdio_session
from tests.nextcloud_double import NextcloudDouble
from tests.oauth_server import oauth_server
from tests.offline import offline_server, provision
from tests.oidc import IdP
from tests.targets import ON_THE_DOUBLE, cases

pytestmark = pytest.mark.integration

# The argument names are what counts; these URIs are only the references a client sends.
FILES = ResourceTemplateReference(uri="nextcloud://files/{+path}")
NOTES = ResourceTemplateReference(uri="nextcloud://notes/{category}")
CALENDAR = ResourceTemplateReference(uri=ONE_CALENDAR_TEMPLATE)  # a real template with a calendar id


async def complete(
    session: ClientSession, name: str, value: str, ref: ResourceTemplateReference | PromptReference = FILES
) -> Completion:
    return (await session.complete(ref, {"name": name, "value": value})).completion


@pytest.fixture
def mcp_url(nextcloud: Nextcloud) -> Iterator[str]:
    with running_app(nextcloud.settings()) as base:
        yield f"{base}/mcp"


def mkcalendar(nextcloud: Nextcloud, cal_id: str, name: str) -> None:
    nextcloud.make_calendar(cal_id, name)


@ON_THE_DOUBLE
async def test_the_server_declares_completions(mcp_url: str) -> None:
    async with http_session(mcp_url) as session:
        capabilities = session.server_capabilities
    assert capabilities is not None
    assert capabilities.completions is not None


async def test_calendar_ids_complete_from_the_users_calendars(mcp_url: str, nextcloud: Nextcloud) -> None:
    mkcalendar(nextcloud, "work-2026", "Work")
    mkcalendar(nextcloud, "workshop", "Workshop")
    async with http_session(mcp_url) as session:
        everything = await complete(session, "calendar_id", "", CALENDAR)
        work = await complete(session, "calendar_id", "WORK", CALENDAR)
        as_tools_name_it = await complete(session, "calendar", "pers", CALENDAR)
        nothing = await complete(session, "calendar_id", "holidays", CALENDAR)
    assert {"personal", "work-2026", "workshop"} <= set(everything.values)
    assert everything.total == len(everything.values)
    assert everything.has_more is False
    assert work.values == ["work-2026", "workshop"]
    assert as_tools_name_it.values == ["personal"]
    assert nothing.values == []
    assert nothing.total == 0


async def test_categories_complete_from_the_users_notes(mcp_url: str, nextcloud: Nextcloud) -> None:
    nextcloud.add_note(title="Plan", content="x", category="Work/Projects")
    nextcloud.add_note(title="Memo", content="x", category="Work")
    nextcloud.add_note(title="Diary", content="x", category="Private")
    nextcloud.add_note(title="Loose", content="x")
    async with http_session(mcp_url) as session:
        everything = await complete(session, "category", "", NOTES)
        work = await complete(session, "category", "w", NOTES)
    assert everything.values == ["Private", "Work", "Work/Projects"]
    assert work.values == ["Work", "Work/Projects"]


async def test_paths_complete_one_folder_level_at_a_time(mcp_url: str, nextcloud: Nextcloud) -> None:
    nextcloud.make_folder(nextcloud.admin, "Reports/Private")
    nextcloud.put_file(nextcloud.admin, "Reports/Projects/deep/x.txt", b"x")
    nextcloud.put_file(nextcloud.admin, "Reports/plan.txt", b"x")
    async with http_session(mcp_url) as session:
        top = await complete(session, "path", "")
        reports = await complete(session, "path", "Reports/")
        starting_p = await complete(session, "path", "Reports/p")
        with_slash = await complete(session, "path", "/Reports/Pro")
        below = await complete(session, "path", "Reports/Projects/")
        missing = await complete(session, "path", "Nowhere/x")
    assert "Reports/" in top.values
    assert not [v for v in top.values if v.count("/") > 1]
    # folders first (with a '/', to go on typing into them), then files; one level only
    assert reports.values == ["Reports/Private/", "Reports/Projects/", "Reports/plan.txt"]
    assert starting_p.values == ["Reports/Private/", "Reports/Projects/", "Reports/plan.txt"]
    assert with_slash.values == ["/Reports/Projects/"]
    assert below.values == ["Reports/Projects/deep/"]
    assert missing.values == []


LEAVING = ["..", "../", "../../etc/", "Reports/../", "Reports/%2e%2e/", "http://evil.example/", "a\x00b/"]
LEAVING.append("x" * 5000)


# refused before Nextcloud is asked: every path on the double, one on the real ones
@cases("typed", LEAVING, on_real=["../"])
async def test_paths_that_could_leave_the_users_files_complete_with_nothing(
    typed: str, mcp_url: str, nextcloud: Nextcloud
) -> None:
    """Refused before Nextcloud is asked (the double shows no listing was requested)."""
    nextcloud.put_file(nextcloud.admin, "Reports/plan.txt", b"x")
    async with http_session(mcp_url) as session:
        asked = len(nextcloud.double.requests) if nextcloud.double else 0
        assert (await complete(session, "path", typed)).values == []
        if nextcloud.double is not None:
            listed = [r for r in list(nextcloud.double.requests)[asked:] if r.method == "PROPFIND"]
            assert listed == []
        assert (await complete(session, "path", "Reports/")).values == ["Reports/plan.txt"]  # still works


async def test_at_most_a_hundred_values(mcp_url: str, nextcloud: Nextcloud) -> None:
    """The protocol's cap: a folder of 120 entries gives 100 values, with the total and has_more."""
    with nextcloud.http() as client:
        client.request("MKCOL", nextcloud.dav_path(nextcloud.admin, "Many"))
        for n in range(120):
            client.request("MKCOL", nextcloud.dav_path(nextcloud.admin, f"Many/f{n:03}"))
    async with http_session(mcp_url) as session:
        many = await complete(session, "path", "Many/")
        some = await complete(session, "path", "Many/f11")
    assert len(many.values) == 100
    assert many.has_more is True
    assert many.total == 120
    assert many.values[:2] == ["Many/f000/", "Many/f001/"]
    assert some.values == [f"Many/f11{n}/" for n in range(10)]
    assert some.has_more is False


@ON_THE_DOUBLE
async def test_a_completion_is_cached_briefly(mcp_url: str, nextcloud: Nextcloud) -> None:
    """The next keystroke is answered without asking Nextcloud again: a file added in between is
    not seen yet (it is within the cache's 30 seconds)."""
    nextcloud.put_file(nextcloud.admin, "Reports/a.txt", b"x")
    async with http_session(mcp_url) as session:
        first = await complete(session, "path", "Reports/")
        nextcloud.put_file(nextcloud.admin, "Reports/b.txt", b"x")
        second = await complete(session, "path", "Reports/")
    assert first.values == second.values == ["Reports/a.txt"]


@ON_THE_DOUBLE
async def test_dates_and_weeks_from_yesterday_on(mcp_url: str) -> None:
    """Days as the calendar resource takes them, then ISO weeks (`2026-W48`)."""
    before = datetime.now().astimezone().date()
    async with http_session(mcp_url) as session:
        dates = await complete(session, "date", "", CALENDAR)
        weeks = await complete(session, "date", f"{before.year}-w", CALENDAR)
    after = datetime.now().astimezone().date()
    expected = [
        [(today + timedelta(days=n)).isoformat() for n in range(-1, 14)]
        + list(dict.fromkeys(_week(today + timedelta(days=n)) for n in range(-1, 14)))
        for today in (before, after)  # midnight may pass meanwhile
    ]
    assert dates.values in expected
    assert weeks.values
    assert all(re.fullmatch(r"\d{4}-W\d\d", week) for week in weeks.values)


def _week(day: date) -> str:
    year, week, _ = day.isocalendar()
    return f"{year:04d}-W{week:02d}"


@ON_THE_DOUBLE
async def test_unknown_arguments_and_prompts_complete_with_nothing(mcp_url: str) -> None:
    async with http_session(mcp_url) as session:
        assert (await complete(session, "password", "")).values == []
        assert (await complete(session, "path", "", PromptReference(name="no-such-prompt"))).values == []


async def test_nextcloud_unreachable_gives_nothing_not_an_error(double_url: str) -> None:
    settings = load_settings(
        env_file=None, nextcloud_host="http://127.0.0.1:9", nextcloud_username="a", nextcloud_password="b"
    )
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            assert (await complete(session, "path", "")).values == []
            assert (await complete(session, "calendar_id", "", CALENDAR)).values == []


async def test_oauth_callers_get_only_what_their_scopes_and_their_files_allow(
    double: NextcloudDouble, double_url: str, idp: IdP
) -> None:
    """Per caller: alice never sees admin's folders (even right after admin's were cached), and a
    token without files:read gets no paths (nor calendars without calendar:read): no values, no
    error that says more."""
    (double.user_files("admin") / "AdminOnly").mkdir(parents=True)
    (double.user_files("alice") / "AliceOnly").mkdir(parents=True)
    with oauth_server(double, double_url, idp) as server:

        def token(user: str, scope: str) -> dict[str, str]:
            now = int(time.time())
            claims = {"iss": idp.issuer, "sub": user, "aud": server.mcp, "iat": now, "exp": now + 600}
            return {"Authorization": f"Bearer {idp.sign({**claims, 'scope': scope, 'client_id': 't'})}"}

        async with http_session(server.mcp, headers=token("admin", "files:read")) as session:
            admin = await complete(session, "path", "")
        async with http_session(server.mcp, headers=token("alice", "files:read")) as session:
            alice = await complete(session, "path", "")
            no_calendar_scope = await complete(session, "calendar_id", "", CALENDAR)
        async with http_session(server.mcp, headers=token("admin", "notes:read")) as session:
            no_files_scope = await complete(session, "path", "")
        async with http_session(server.mcp, headers=token("alice", "calendar:read")) as session:
            calendars = await complete(session, "calendar_id", "", CALENDAR)
    assert admin.values == ["AdminOnly/"]
    assert alice.values == ["AliceOnly/"]
    assert no_files_scope.values == []
    assert no_calendar_scope.values == []
    assert "personal" in calendars.values  # the same caller, with the scope: values


async def test_offline_access_completes_only_for_a_connected_user(
    double: NextcloudDouble, double_url: str, idp: IdP, tmp_path: Path
) -> None:
    """As `@require_provisioning`: without a grant there are no values, and a completion never
    opens a consent request (it cannot ask the user); once connected, alice's own folders."""
    (double.user_files("alice") / "AliceOnly").mkdir(parents=True)
    with offline_server(double, double_url, idp, tmp_path / "store.sqlite3") as server:
        async with http_session(server.mcp, headers=server.headers("alice")) as session:
            before = await complete(session, "path", "")
        assert server.store_rows("SELECT COUNT(*) FROM elicitations") == [(0,)]
        await provision(server, "alice")
        async with http_session(server.mcp, headers=server.headers("alice")) as session:
            after = await complete(session, "path", "")
    assert before.values == []
    assert after.values == ["AliceOnly/"]


async def test_categories_come_from_a_bounded_scan(
    mcp_url: str, nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only MAX_SCANNED notes are read for categories (here lowered to 2 of 4): the answer says
    there may be more."""
    monkeypatch.setattr(sources, "MAX_SCANNED", 2)
    for n in range(4):
        nextcloud.add_note(title=f"N{n}", content="x", category=f"C{n}")
    async with http_session(mcp_url) as session:
        found = await complete(session, "category", "", NOTES)
    assert len(found.values) == 2
    assert set(found.values) < {"C0", "C1", "C2", "C3"}
    assert found.has_more is True
    assert found.total is None


async def test_a_client_of_the_2026_revision_gets_the_same_values(mcp_url: str, nextcloud: Nextcloud) -> None:
    nextcloud.put_file(nextcloud.admin, "Reports/plan.txt", b"x")
    async with Client(mcp_url) as client:
        assert client.session.protocol_version == "2026-07-28"
        found = (await client.complete(FILES, {"name": "path", "value": "Reports/p"})).completion
    assert found.values == ["Reports/plan.txt"]


async def test_address_books_complete_by_id(mcp_url: str) -> None:
    async with http_session(mcp_url) as session:
        found = await complete(
            session, "address_book", "CON", ResourceTemplateReference(uri="x://{address_book}")
        )
    assert found.values == ["contacts"]


async def test_names_that_hide_what_they_are_are_not_offered(mcp_url: str, nextcloud: Nextcloud) -> None:
    """A file another app named with U+202E ('fdp.exe' shown as 'exe.pdf') is not suggested;
    its plainly named neighbour is."""
    nextcloud.put_file(nextcloud.admin, "Inbox/invoice\u202efdp.exe", b"x")
    nextcloud.put_file(nextcloud.admin, "Inbox/invoice.pdf", b"x")
    async with http_session(mcp_url) as session:
        found = await complete(session, "path", "Inbox/inv")
    assert found.values == ["Inbox/invoice.pdf"]


async def test_a_failing_nextcloud_gives_nothing_and_is_not_remembered(
    double: NextcloudDouble, settings: Settings
) -> None:
    """A 500 from Nextcloud: no values and no error; the failure is not cached, so the next
    keystroke asks again and gets the folder."""
    (double.user_files("admin") / "Reports").mkdir(parents=True)
    (double.user_files("admin") / "Reports" / "plan.txt").write_text("x")
    double.inject("PROPFIND", "/remote.php/dav/files/admin/Reports", 500)
    with running_app(settings) as base:
        async with http_session(f"{base}/mcp") as session:
            failed = await complete(session, "path", "Reports/")
            recovered = await complete(session, "path", "Reports/")
    assert failed.values == []
    assert recovered.values == ["Reports/plan.txt"]


async def test_completions_over_stdio(nextcloud: Nextcloud) -> None:
    """Claude Desktop's transport: no HTTP request behind the completion, the one configured user."""
    nextcloud.put_file(nextcloud.admin, "Reports/plan.txt", b"x")
    async with stdio_session(nextcloud.server_env()) as session:
        found = await complete(session, "path", "/Rep")
    assert found.values == ["/Reports/"]


async def test_every_template_argument_a_person_types_is_completed(
    mcp_url: str, nextcloud: Nextcloud
) -> None:
    """The resource templates (ADR 0039) name their arguments as the completions' table does; only
    contact uids, which nobody types, are left out. Note ids come newest first. The real
    templates' URIs, as a client sends them back."""
    nextcloud.make_folder(nextcloud.admin, "Reports")
    older = nextcloud.add_note(title="Older", content="x")
    newer = nextcloud.add_note(title="Newer", content="x")
    async with http_session(mcp_url) as session:
        templates = (await session.list_resource_templates()).resource_templates
        offered = {}
        for template in templates:
            for name in re.findall(r"\{[+#./;?&]?(\w+)", template.uri_template):
                ref = ResourceTemplateReference(uri=template.uri_template)
                found = await complete(session, name, "", ref)
                offered[name] = found.values
    assert set(offered) == {"id", "path", "date", "calendar", "addressbook", "uid"}
    assert set(offered) - set(sources.SOURCES) == {"uid"}
    assert offered["uid"] == []
    assert set(offered["id"]) == {str(older["id"]), str(newer["id"])}
    assert "Reports/" in offered["path"]
    assert "contacts" in offered["addressbook"]
    assert "personal" in offered["calendar"]
    assert len(offered["date"]) > 15
