"""The tests' own port choice (tests/processes.py): a port for a server started next must not be
one an outgoing connection can take first."""

from __future__ import annotations

import random
import socket

import pytest

from tests import processes
from tests.processes import _outgoing_ports, free_port


def test_a_free_port_is_bindable_and_outside_the_outgoing_connections_range() -> None:
    low, high = _outgoing_ports()
    for _ in range(50):
        port = free_port()
        assert not low <= port <= high, port
        assert port >= 10000, port
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_a_port_in_use_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as busy, socket.socket() as next_one:
        busy.bind(("127.0.0.1", free_port()))
        busy.listen()
        next_one.bind(("127.0.0.1", free_port()))
        taken, free = busy.getsockname()[1], next_one.getsockname()[1]
        next_one.close()
        draws = iter([taken, free])
        monkeypatch.setattr(processes, "_draw", lambda start, end: next(draws))
        assert free_port() == free


def test_workers_seeded_alike_draw_other_ports() -> None:
    """pytest-randomly seeds `random` with one seed in every xdist worker."""
    random.seed(1234)
    first = [free_port() for _ in range(5)]
    random.seed(1234)
    second = [free_port() for _ in range(5)]
    assert first != second
