"""A Nextcloud double made of real peers (WsgiDAV, Radicale) and recorded-behaviour Notes/OCS."""

from tests.nextcloud_double.app import NextcloudDouble, Recorded
from tests.nextcloud_double.users import Account

__all__ = ["Account", "NextcloudDouble", "Recorded"]
