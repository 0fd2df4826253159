"""Who reads a comment on a file or folder (ADR 0058): its owner, and everyone the file or any
folder above it is shared with (users by name; groups, teams, links, e-mail and federated shares
as what they are), and anyone the comment mentions."""

from __future__ import annotations

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav.file_facts import FileFacts
from nextcloud_mcp_server.tools._audience import Audience, mentions

__all__ = ["file_audience"]

# share types (OCP\Share\IShare): 0 user, 1 group, 3 link, 4 e-mail, 6 federated, 7 team, 10 Talk
_WIDE = {
    1: "the members of the group {}",
    3: "anyone with a public link to {path}",
    4: "the e-mail recipient {}",
    6: "the federated user {}",
    7: "the members of the team {}",
    10: "the participants of the conversation {}",
}


async def file_audience(nc: NextcloudClient, path: str, text: str) -> Audience:
    me = await nc.dav_user_id()
    facts_client = FileFacts(nc.http, nc.credential, me)
    people: dict[str, str] = {}
    open_to: list[str] = []
    facts: list[str] = []
    for level in await facts_client.sharing(path):
        shown = paths.display(level.path)
        facts.append(f"{level.path}:{level.owner}:{level.share_types}:{level.sharees}")
        if level.owner and level.owner != me:
            people[level.owner] = level.owner_name or level.owner
            open_to.append(f"whoever {level.owner_name or level.owner} shares {shown} with")
        for kind, sharee, name in level.sharees:
            if kind == 0 and sharee != me:
                people[sharee] = name or sharee
            elif kind in _WIDE:
                open_to.append(_WIDE[kind].format(name or sharee, path=shown))
            elif kind != 0:
                open_to.append(f"a share of {shown} of kind {kind}")
        if level.share_types and not level.sharees:
            open_to.append(f"the shares of {shown} (kinds {', '.join(map(str, level.share_types))})")
    where = f"the comments of {paths.display(path)}"
    audience = Audience(where, tuple(people.values()), tuple(dict.fromkeys(open_to)), tuple(facts))
    return audience.with_mentions(mentions(text), {*people, me})
