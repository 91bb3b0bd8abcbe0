"""Fixtures: one real server for the session, and clients of it; and how
registered players agree to a game."""

from __future__ import annotations

import signal
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from server_process import ServerProcess

from carcassonne_client import GameClient, Registration, pb


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


def agreed_game(client: GameClient, players: Sequence[Registration], **options: Any) -> str:
    """A game of registered players, each in the seat of its place in
    `players`, with everyone's consent: the first offers it (a challenge,
    with its key; `options` go to create_challenge), the others accept
    with theirs. The game's name."""
    challenge = client.create_challenge(players[0].api_key, [p.name for p in players], **options)
    for player in players[1:]:
        challenge = client.accept_challenge(challenge.name, player.api_key)
    assert challenge.status == pb.CHALLENGE_STATUS_ACCEPTED, challenge
    return challenge.game
