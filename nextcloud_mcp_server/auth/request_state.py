"""The key that seals the `requestState` of 2026-07-28 calls, shared by every replica
(docs/ADR/0055-a-request-state-every-replica-reads.md).

A call that needs the person (an approval, a consent) answers with an input-required result whose
`requestState` the client echoes with its answer, to whichever replica the balancer picks. The
SDK seals that state (AES-256-GCM), binds it to the call's method, tool and arguments, to the
caller (client, issuer, subject) and to an audience, and lets it expire; by default under a key
made at start-up, which only the process that made it knows. Here the keys are derived from
TOKEN_ENCRYPTION_KEY - the same list, the same rotation (the first seals, all open) - for this
purpose alone, and the audience is this server's public URL. Without configured keys the SDK's
own per-process key stays (one process: nothing to share; REPLICA_ID requires keys).
"""

from __future__ import annotations

from mcp.server.request_state import RequestStateSecurity

from nextcloud_mcp_server import DISTRIBUTION
from nextcloud_mcp_server.config import Settings
from nextcloud_mcp_server.storage.crypto import derived_keys

__all__ = ["PURPOSE", "request_state_security"]

PURPOSE = "request-state/v1"
# The audience when MCP_PUBLIC_URL is unset: the project's name (ADR 0065 on the old name).
SERVER_AUDIENCE = DISTRIBUTION


def request_state_security(settings: Settings) -> RequestStateSecurity | None:
    """The policy every replica with the same keys shares; None: the SDK's per-process key."""
    keys = settings.encryption_keys()
    if not keys:
        return None
    # A consent's state must outlive the consent it waits for; an approval's, the person's thought.
    ttl = float(max(600, settings.elicitation_timeout_seconds))
    audience = settings.mcp_public_url or SERVER_AUDIENCE
    return RequestStateSecurity(keys=derived_keys(keys, PURPOSE), ttl=ttl, audience=audience)
