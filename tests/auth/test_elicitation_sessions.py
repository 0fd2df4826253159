"""A reused consent tells every MCP session that asked for it (not only the last one)."""

from __future__ import annotations

from nextcloud_mcp_server.auth.provisioning import ElicitationSessions


class Session:
    def __init__(self) -> None:
        self.told: list[str] = []

    async def send_elicit_complete(self, elicitation_id: str) -> None:
        self.told.append(elicitation_id)


class Gone:
    async def send_elicit_complete(self, elicitation_id: str) -> None:
        raise ConnectionError("session closed")


async def test_every_session_that_asked_is_told_once() -> None:
    sessions = ElicitationSessions()
    first, second = Session(), Session()
    for session in (first, Gone(), second, first):
        sessions.remember("e1", session, expires_at=10**10)
    assert await sessions.complete("e1")
    assert first.told == ["e1"]
    assert second.told == ["e1"]
    assert not await sessions.complete("e1")  # told once


async def test_sessions_kept_per_consent_are_bounded() -> None:
    sessions = ElicitationSessions()
    many = [Session() for _ in range(100)]
    for session in many:
        sessions.remember("e1", session, expires_at=10**10)
    await sessions.complete("e1")
    told = [s for s in many if s.told]
    assert len(told) == ElicitationSessions.MAX_SESSIONS_PER_ELICITATION
    assert told == many[-len(told) :]  # the most recent ones
