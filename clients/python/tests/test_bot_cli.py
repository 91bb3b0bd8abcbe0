"""`python -m carcassonne_client.bot` as a person would run it."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys

from server_process import ServerProcess

from carcassonne_client import GameClient, pb

BOT_TIMEOUT_S = 120


def run_bot(server: ServerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "carcassonne_client.bot", "--addr", server.address, *args],
        capture_output=True,
        text=True,
        timeout=BOT_TIMEOUT_S,
        check=False,
    )


def score_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.strip().startswith("seat ")]


def test_the_bot_plays_a_game_and_prints_scores_and_winners(
    server: ServerProcess, client: GameClient
) -> None:
    # No --seed: the server draws its own seed, so the commitment is checked
    # on a seed nobody here chose.
    result = run_bot(server, "--players", "3", "--river", "--count")
    assert result.returncode == 0, result.stderr
    match = re.search(r"^(games/\S+) finished after (\d+) actions", result.stdout, re.MULTILINE)
    assert match, result.stdout
    game = client.get_game(match.group(1))
    assert game.status == pb.GAME_STATUS_FINISHED
    assert hashlib.sha256(bytes.fromhex(game.seed)).hexdigest() == game.seed_sha256

    # It prints every seat's final score and marks the winners.
    lines = score_lines(result.stdout)
    assert len(lines) == 3
    for player, line in zip(game.players, lines, strict=True):
        parsed = re.fullmatch(r"\s*seat (\d+)\s+(.+?)\s+(\d+)(  winner)?", line)
        assert parsed, line
        assert int(parsed.group(1)) == player.seat
        assert parsed.group(2) == player.name
        assert int(parsed.group(3)) == player.score
        assert bool(parsed.group(4)) == (player.seat in game.winners)
    winners = ", ".join(p.name for p in game.players if p.seat in game.winners)
    assert f"winners: {winners}" in result.stdout
    assert "matches its commitment" in result.stdout


def test_the_same_seed_replays_the_same_game(server: ServerProcess) -> None:
    first = run_bot(server, "--players", "2", "--seed", "7")
    second = run_bot(server, "--players", "2", "--seed", "7")
    other = run_bot(server, "--players", "2", "--seed", "8")
    for result in (first, second, other):
        assert result.returncode == 0, result.stderr
    assert score_lines(first.stdout) == score_lines(second.stdout)
    seeds = [re.search(r"^seed (\w+)", r.stdout, re.MULTILINE) for r in (first, second, other)]
    assert all(seeds)
    assert seeds[0].group(1) == seeds[1].group(1) != seeds[2].group(1)  # type: ignore[union-attr]


def test_the_bot_refuses_bad_arguments(server: ServerProcess) -> None:
    # Six players is more than the rules allow: refused before any call.
    result = run_bot(server, "--players", "6")
    assert result.returncode != 0
    assert "--players" in result.stderr


def test_the_bot_plays_a_game_with_a_spectator_delay_to_its_end(
    server: ServerProcess, client: GameClient
) -> None:
    # The bot reads with its seats' tokens: a spectator would see the game
    # 5 events behind and no legal action of the version it must act on.
    result = run_bot(server, "--players", "2", "--seed", "11", "--spectator-delay", "5")
    assert result.returncode == 0, result.stderr
    match = re.search(r"^(games/\S+) finished after (\d+) actions", result.stdout, re.MULTILINE)
    assert match, result.stdout
    assert int(match.group(2)) > 20, result.stdout
    assert "matches its commitment" in result.stdout
    game = client.get_game(match.group(1))
    assert game.status == pb.GAME_STATUS_FINISHED
    assert game.spectator_delay == 5
