"""Fixtures: one real server for the session, and clients of it."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
from server_process import ServerProcess

from carcassonne_client import GameClient


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The server binary on a free port with a fresh data dir. At the end it
    must stop on SIGTERM and exit 0 (a failure shows as a teardown error)."""
    root = tmp_path_factory.mktemp("server")
    process = ServerProcess(root / "data", root / "server.log")
    try:
        yield process
    finally:
        code = process.stop(signal.SIGTERM)
    assert code == 0, f"the server exited {code} on SIGTERM{process.log_tail()}"


# The admin key of the league server: it makes organisers.
ADMIN_KEY = "admin-key-of-the-python-client-tests-0123"


@pytest.fixture(scope="session")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with an admin key, for registered players and tournaments
    (registration is open, as by default)."""
    root = tmp_path_factory.mktemp("league")
    process = ServerProcess(root / "data", root / "server.log", admin_key=ADMIN_KEY)
    try:
        yield process
    finally:
        code = process.stop(signal.SIGTERM)
    assert code == 0, f"the league server exited {code} on SIGTERM{process.log_tail()}"


@pytest.fixture
def league_client(league: ServerProcess) -> Iterator[GameClient]:
    with GameClient.connect(league.address) as connected:
        yield connected


@pytest.fixture
def client(server: ServerProcess) -> Iterator[GameClient]:
    with GameClient.connect(server.address) as connected:
        yield connected
