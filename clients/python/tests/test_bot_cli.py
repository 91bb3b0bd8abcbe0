"""`python -m carcassonne_client.bot` as a person would run it."""

from __future__ import annotations

import hashlib
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from conftest import ADMIN_KEY, agreed_game
from server_process import ServerProcess

from carcassonne_client import GameClient, pb, time_control

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

    # How it ended, then every seat's final score and rank, and the winners.
    assert "\nending: NORMAL: the last tile was played\n" in result.stdout
    lines = score_lines(result.stdout)
    assert len(lines) == 3
    for player, line in zip(game.players, lines, strict=True):
        parsed = re.fullmatch(r"\s*seat (\d+)\s+(.+?)\s+(\d+)  rank (\d+)(  winner)?", line)
        assert parsed, line
        assert int(parsed.group(1)) == player.seat
        assert parsed.group(2) == player.name
        assert int(parsed.group(3)) == player.score
        assert int(parsed.group(4)) == player.rank
        assert bool(parsed.group(5)) == (player.seat in game.winners)
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
    for args, flag in [
        (["--main-ms", "-5"], "--main-ms"),
        (["--on-timeout", "lose"], "--on-timeout"),
        (["--resign-after", "2"], "--resign-after needs --resign-seat"),
        (["--players", "2", "--resign-seat", "2"], "--resign-seat"),
    ]:
        result = run_bot(server, *args)
        assert result.returncode == 2, (args, result.stdout)
        assert flag in result.stderr, (args, result.stderr)
    # The server checks a time control: neither a main time nor a limit.
    result = run_bot(server, "--on-timeout", "auto")
    assert result.returncode == 1
    assert "INVALID_ARGUMENT" in result.stderr and "time_control" in result.stderr


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


def game_of(client: GameClient, stdout: str) -> pb.Game:
    match = re.search(r"^(games/\S+) finished after (\d+) actions", stdout, re.MULTILINE)
    assert match, stdout
    return client.get_game(match.group(1))


def test_the_bot_plays_a_clocked_game_and_shows_each_seats_time_left(
    server: ServerProcess, client: GameClient
) -> None:
    clock = ["--main-ms", "120000", "--increment-ms", "1000", "--decision-ms", "30000"]
    result = run_bot(server, "--players", "3", "--seed", "5", *clock)
    assert result.returncode == 0, result.stderr
    assert "too late" not in result.stderr
    game = game_of(client, result.stdout)
    assert game.time_control == pb.TimeControl(
        main_ms=120_000,
        increment_ms=1_000,
        decision_ms=30_000,
        on_timeout=pb.TIMEOUT_RULE_FORFEIT,
    )
    assert game.ending.reason == pb.END_REASON_NORMAL
    assert "\nending: NORMAL: the last tile was played\n" in result.stdout
    lines = score_lines(result.stdout)
    assert len(lines) == 3
    for player, line in zip(game.players, lines, strict=True):
        parsed = re.search(r"  rank (\d+)  (\d+\.\d) s left(  winner)?$", line)
        assert parsed, line
        assert int(parsed.group(1)) == player.rank
        assert parsed.group(2) == f"{player.time_left_ms / 1000:.1f}"


def test_a_seat_of_the_bot_resigns_after_its_actions(
    server: ServerProcess, client: GameClient
) -> None:
    result = run_bot(server, "--players", "2", "--resign-seat", "1", "--resign-after", "2")
    assert result.returncode == 0, result.stderr
    game = game_of(client, result.stdout)
    assert game.ending == pb.Ending(reason=pb.END_REASON_RESIGNED, seat=1)
    # Seat 0: tile, follower; seat 1: tile, follower; seat 0 again; seat 1 resigns.
    assert " finished after 7 actions " in result.stdout
    assert "\nending: RESIGNED: seat 1 (Bot 1) resigned\n" in result.stdout
    first, second = score_lines(result.stdout)
    assert first.endswith("  rank 1  winner"), first
    assert second.endswith("  rank 2  resigned"), second
    assert "winners: Bot 0\n" in result.stdout


def test_the_bot_thinks_no_closer_to_a_deadline_than_its_margin(
    server: ServerProcess, client: GameClient
) -> None:
    # Each decision has 1300 ms; the bot would think for a minute, but
    # answers 1000 ms before the deadline: about 300 ms a decision, over
    # the 6 decisions before seat 1 resigns.
    started = time.monotonic()
    result = run_bot(
        server,
        *["--players", "2", "--decision-ms", "1300", "--think-ms", "60000"],
        *["--margin-ms", "1000", "--resign-seat", "1", "--resign-after", "2"],
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert "too late" not in result.stderr
    game = game_of(client, result.stdout)
    assert game.ending == pb.Ending(reason=pb.END_REASON_RESIGNED, seat=1)
    assert 6 * 0.2 < elapsed < 20, f"it thought for {elapsed:.1f} s"


def test_the_bot_reports_a_late_answer_and_plays_on(
    server: ServerProcess, client: GameClient
) -> None:
    # No margin: seat 0 thinks up to its deadline, so its answer comes too
    # late. Under auto the server decides for it and the game goes on, and
    # seat 1 resigns at its first decision.
    result = run_bot(
        server,
        *["--players", "2", "--decision-ms", "1500", "--on-timeout", "auto"],
        *["--think-ms", "60000", "--margin-ms", "0", "--resign-seat", "1"],
    )
    assert result.returncode == 0, result.stderr
    assert re.search(r"^seat 0 answered too late at version 2: OUT_OF_TIME", result.stderr, re.M)
    game = game_of(client, result.stdout)
    assert game.ending == pb.Ending(reason=pb.END_REASON_RESIGNED, seat=1)
    assert list(game.winners) == [0]
    assert " finished after 1 actions " in result.stdout


def test_the_bot_plays_as_a_registered_player_until_its_games_end(
    league: ServerProcess, league_client: GameClient, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:6]
    ada = league_client.register_player(f"Ada-{tag}")
    bob = league_client.register_player(f"Bob-{tag}")
    key_file = tmp_path / "bob.key"
    key_file.write_text(bob.api_key + "\n")
    bots = [
        start_bot(league, "--key", ada.api_key, "--games", "2", "--seed", "3"),
        start_bot(league, "--key-file", str(key_file), "--games", "2"),
    ]
    # No clock: the bots answer whenever they are up.
    names = [agreed_game(league_client, [ada, bob]), agreed_game(league_client, [bob, ada])]
    for bot in bots:
        stdout, stderr = bot.communicate(timeout=BOT_TIMEOUT_S)
        assert bot.returncode == 0, stderr
        for name in names:
            assert re.search(
                rf"^{name} ended: seat \d rank \d, \d+ points \(NORMAL", stdout, re.M
            ), stdout
        assert re.search(r"^played \d+ actions in 2 games ended$", stdout, re.M), stdout
    for name in names:
        assert league_client.get_game(name).status == pb.GAME_STATUS_FINISHED


def test_the_bot_plays_a_tournament_as_a_registered_player_to_its_standings(
    league: ServerProcess, league_client: GameClient
) -> None:
    tag = uuid.uuid4().hex[:6]
    names = [f"Cli{i}-{tag}" for i in range(2)]
    keys = [league_client.register_player(name).api_key for name in names]
    boss = f"Boss-{tag}"
    boss_key = league_client.register_player(boss).api_key
    league_client.set_organiser(boss, ADMIN_KEY)
    # Created before the bots start: each finds its first decision in the
    # snapshot its stream opens with.
    created = league_client.create_tournament(
        boss_key, names, rounds=1, time_control=time_control(decision_ms=10_000)
    )
    bots = [start_bot(league, "--key", key, "--tournament", created.name) for key in keys]
    for bot in bots:
        stdout, stderr = bot.communicate(timeout=BOT_TIMEOUT_S)
        assert bot.returncode == 0, stderr
        assert f"{created.name} final standings:" in stdout, stdout
        for name in names:
            assert re.search(rf"^\s+[12]  players/{name} ", stdout, re.M), stdout
    tournament = league_client.get_tournament(created.name)
    assert tournament.status == pb.TOURNAMENT_STATUS_FINISHED
    game = league_client.get_game(tournament.paired_rounds[0].tables[0].games[0].game)
    assert game.ending.reason == pb.END_REASON_NORMAL


def test_the_registered_mode_refuses_the_options_of_a_new_game(server: ServerProcess) -> None:
    result = run_bot(server, "--key", "k", "--players", "3", "--river")
    assert result.returncode == 2
    assert "--players, --river: options of a new game, not of --key" in result.stderr
    for alone in (["--games", "2"], ["--accept-challenges"]):
        result = run_bot(server, *alone)
        assert result.returncode == 2
        assert "--games, --tournament and --accept-challenges need --key" in result.stderr
    result = run_bot(server, "--key", "k", "--key-file", "f")
    assert result.returncode == 2
    # A key of nobody: the stream is refused.
    result = run_bot(server, "--key", "not-a-key-of-anyone")
    assert result.returncode == 1
    assert "UNKNOWN_KEY" in result.stderr


def test_the_bot_accepts_challenges_when_told_to_and_plays_the_game(
    league: ServerProcess, league_client: GameClient
) -> None:
    tag = uuid.uuid4().hex[:6]
    ada = league_client.register_player(f"Ada-{tag}")
    bob = league_client.register_player(f"Bob-{tag}")
    bots = [
        start_bot(league, "--key", ada.api_key, "--games", "1", "--accept-challenges"),
        # The challenger's seat is his from the start: no acceptance.
        start_bot(league, "--key", bob.api_key, "--games", "1"),
    ]
    offer = league_client.create_challenge(bob.api_key, [bob.name, ada.name])
    outs = []
    for bot in bots:
        stdout, stderr = bot.communicate(timeout=BOT_TIMEOUT_S)
        assert bot.returncode == 0, stderr
        outs.append(stdout)
    game = league_client.get_challenge(offer.name).game
    assert game, "the challenge was accepted"
    assert league_client.get_game(game).status == pb.GAME_STATUS_FINISHED
    ada_out, bob_out = outs
    # Ada's bot heard of the challenge (by its stream's snapshot, or live)
    # and of her acceptance, which started the game.
    accepted = (
        f"{offer.name} from {bob.name}: ACCEPTED, seats {bob.name} (taken), "
        f"{ada.name} (taken) -> {game}\n"
    )
    assert accepted in ada_out, ada_out
    for out in outs:
        assert re.search(rf"^{game} ended: seat \d rank \d, \d+ points \(NORMAL", out, re.M), out
    assert re.search(r"^played \d+ actions in 1 games ended, accepted 1 challenges$", ada_out, re.M)
    assert re.search(r"^played \d+ actions in 1 games ended$", bob_out, re.M), bob_out


def test_the_bot_leaves_a_challenge_to_a_person_by_default(
    league: ServerProcess, league_client: GameClient
) -> None:
    tag = uuid.uuid4().hex[:6]
    ada = league_client.register_player(f"Ada-{tag}")
    bob = league_client.register_player(f"Bob-{tag}")
    offer = league_client.create_challenge(bob.api_key, [bob.name, ada.name])
    bot = start_bot(league, "--key", ada.api_key)
    # Ctrl-C if it hangs; the test fails below then.
    watchdog = threading.Timer(BOT_TIMEOUT_S, bot.kill)
    watchdog.start()
    try:
        assert bot.stdout is not None
        # The snapshot of its stream tells it of the challenge, waiting.
        line = bot.stdout.readline()
        assert line.startswith(
            f"{offer.name} from {bob.name}: OPEN, seats {bob.name} (taken), {ada.name} (waiting)"
        ), line
        # Time to act on it, if it were to (it is told of its own
        # acceptance otherwise).
        time.sleep(1)
        assert league_client.get_challenge(offer.name).status == pb.CHALLENGE_STATUS_OPEN
        bot.send_signal(signal.SIGINT)
        stdout, stderr = bot.communicate(timeout=BOT_TIMEOUT_S)
    finally:
        watchdog.cancel()
    assert bot.returncode == 0, stderr
    assert "played 0 actions in 0 games ended" in stdout
    assert league_client.get_challenge(offer.name).status == pb.CHALLENGE_STATUS_OPEN
    league_client.cancel_challenge(offer.name, bob.api_key)


def start_bot(server: ServerProcess, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "carcassonne_client.bot", "--addr", server.address, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
