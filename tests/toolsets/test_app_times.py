"""A Unix time an app sends is moved into what a date can show (1970 to 9999): a mail dated
10**12 (year 33658) or a status cleared at 10**20 raised ValueError or OverflowError from the
tool that showed it, and one such date failed the whole answer it was in."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.nextcloud.models import LAST_TIMESTAMP
from nextcloud_mcp_server.toolsets.collectives.client import Page
from nextcloud_mcp_server.toolsets.mail import tools as mail_tools
from nextcloud_mcp_server.toolsets.mail.client import MessageHead
from nextcloud_mcp_server.toolsets.status import tools as status_tools
from nextcloud_mcp_server.toolsets.status.client import UserStatus


@pytest.mark.parametrize(
    ("sent", "kept"),
    [(10**12, LAST_TIMESTAMP), (10**20, LAST_TIMESTAMP), (-5, 0), (1_700_000_000, 1_700_000_000)],
)
def test_a_time_outside_the_calendar_is_its_nearest_end(sent: int, kept: int) -> None:
    head = MessageHead.model_validate({"databaseId": 1, "mailboxId": 1, "dateInt": sent})
    assert head.date == kept
    mail_tools._date(head.date)  # raised before
    status = UserStatus.model_validate({"status": "away", "clearAt": sent})
    assert status.clear_at == kept
    status_tools._info(status)  # raised before
    page = Page.model_validate({"id": 1, "title": "t", "parentId": 0, "fileName": "t.md", "timestamp": sent})
    assert page.timestamp == kept


def test_the_last_second_shown_is_the_last_of_year_9999() -> None:
    head = MessageHead.model_validate({"databaseId": 1, "mailboxId": 1, "dateInt": 10**20})
    assert mail_tools._date(head.date).startswith("9999-12-31T23:59:59")
