"""The server stops cleanly on signals and keeps its games across restarts."""

from __future__ import annotations

import random
import signal
from pathlib import Path

from server_process import ServerProcess

from carcassonne_client import GameClient, pb
from carcassonne_client.bot import play_random_game


def test_games_survive_a_sigterm_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    log = tmp_path / "server.log"

    first = ServerProcess(data, log)
    try:
        with GameClient.connect(first.address) as client:
            created = client.create_game(["Ada", "Bob"])
            for _ in range(5):
                legal = client.legal_actions(created.name)
                client.act(
                    created.name,
                    created.tokens[legal.pending.seat],
                    legal.version,
                    legal.actions[0],
                )
            before = client.get_game(created.name)
            legal_before = client.legal_actions(created.name)
    finally:
        code = first.stop(signal.SIGTERM)
    assert code == 0, f"exit {code} on SIGTERM{first.log_tail()}"

    second = ServerProcess(data, log)
    try:
        with GameClient.connect(second.address) as client:
            assert client.get_game(created.name) == before
            assert client.legal_actions(created.name) == legal_before
            # The game goes on where it stopped, with the same tokens.
            game, _ = play_random_game(client, created, random.Random(1))
            assert game.status == pb.GAME_STATUS_FINISHED
    finally:
        code = second.stop(signal.SIGINT)
    assert code == 0, f"exit {code} on SIGINT{second.log_tail()}"
