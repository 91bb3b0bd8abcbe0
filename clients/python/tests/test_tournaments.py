"""A tournament run by the real server with bots that play through the
client's registered-bot helper, one stream each; watching it to its final
standings, its archive, withdrawals, ratings and the refusals' reasons."""

from __future__ import annotations

import io
import json
import random
import tarfile
import threading
import time
import uuid
from collections.abc import Iterator

import grpc
import pytest
from conftest import ADMIN_KEY
from server_process import ServerProcess

from carcassonne_client import (
    GameClient,
    GameError,
    Reason,
    RegisteredBot,
    pb,
    random_policy,
    time_control,
)

# Every game has a clock: a decision not made in 5 s forfeits the seat.
# The bots answer in milliseconds, so every game should end normally.
CLOCK = time_control(decision_ms=5_000)
FINISH_S = 180.0


class Bots:
    """Registered bots, each playing in a thread of its own over its own
    connection and stream."""

    def __init__(self, address: str, names: list[str], keys: list[str]) -> None:
        self.names = names
        self.failures: list[BaseException] = []
        self.clients = [GameClient.connect(address) for _ in names]
        self.bots = [
            RegisteredBot(c, key, random_policy(random.Random(i)))
            for i, (c, key) in enumerate(zip(self.clients, keys, strict=True))
        ]
        self.threads = [threading.Thread(target=self._run, args=(b,)) for b in self.bots]

    def _run(self, bot: RegisteredBot) -> None:
        try:
            bot.run()
        except BaseException as error:  # reported by the test
            self.failures.append(error)

    def start(self) -> None:
        for thread in self.threads:
            thread.start()
        # Rounds are told to the streams open when they are paired.
        for bot in self.bots:
            assert bot.listening.wait(30)

    def stop(self) -> None:
        for bot in self.bots:
            bot.stop()
        for thread in self.threads:
            thread.join(timeout=10)
        for c in self.clients:
            c.close()


@pytest.fixture
def four_bots(league: ServerProcess, league_client: GameClient) -> Iterator[Bots]:
    tag = uuid.uuid4().hex[:6]
    names = [f"Bot{i}-{tag}" for i in range(4)]
    keys = [league_client.register_player(name).api_key for name in names]
    bots = Bots(league.address, names, keys)
    bots.start()
    try:
        yield bots
    finally:
        bots.stop()


def organiser(client: GameClient) -> str:
    """A new organiser's key."""
    name = f"Organiser-{uuid.uuid4().hex[:6]}"
    key = client.register_player(name).api_key
    client.set_organiser(name, ADMIN_KEY)
    return key


def follow_to_the_end(client: GameClient, name: str) -> list[pb.WatchTournamentResponse]:
    """Every message of WatchTournament, to its end."""
    messages = list(client.watch_tournament(name, timeout=FINISH_S))
    assert messages, "the stream starts with the tournament now"
    return messages


def wait_for(condition: object, what: str, within_s: float = 10.0) -> None:
    """Waits until `condition()` holds: the bots may still be reading their
    streams when the tournament ends."""
    assert callable(condition)
    deadline = time.monotonic() + within_s
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_swiss_of_four_bots_runs_to_its_final_standings_and_exports_its_archive(
    league_client: GameClient, four_bots: Bots
) -> None:
    client = league_client
    boss = organiser(client)
    # A bot is no organiser.
    with pytest.raises(GameError) as refused:
        client.create_tournament(
            four_bots.bots[0].key, four_bots.names, rounds=2, time_control=CLOCK
        )
    assert (refused.value.code, refused.value.reason) == (
        grpc.StatusCode.PERMISSION_DENIED,
        Reason.NOT_ORGANISER,
    )

    created = client.create_tournament(
        boss,
        four_bots.names,
        title="Python open",
        format="swiss",
        rounds=2,
        rated=True,
        time_control=CLOCK,
    )
    assert created.name.startswith("tournaments/")
    assert created.status == pb.TOURNAMENT_STATUS_RUNNING
    assert created.current_round == 1
    assert created.pairing == "pairing/1"
    assert len(created.paired_rounds[0].tables) == 2
    assert created.seed == "" and len(created.seed_sha256) == 64, "the seed is sealed"
    assert created.participants == [f"players/{n}" for n in four_bots.names]
    # Running: no archive yet.
    with pytest.raises(GameError) as running:
        client.export_tournament_archive(created.name)
    assert (running.value.code, running.value.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        Reason.TOURNAMENT_STATE,
    )

    messages = follow_to_the_end(client, created.name)
    last = messages[-1]
    tournament, standings = last.tournament, last.standings
    assert not four_bots.failures, four_bots.failures
    assert tournament.status == pb.TOURNAMENT_STATUS_FINISHED
    assert len(tournament.paired_rounds) == 2
    assert len(tournament.seed) == 64, "revealed at the end"
    assert standings.final and standings.tournament == created.name
    assert [s.rank for s in standings.standings] == [1, 2, 3, 4]
    assert {s.player for s in standings.standings} == {f"players/{n}" for n in four_bots.names}
    # Two rounds of two duels, 1 point to each winner.
    assert sum(s.points_sixtieths for s in standings.standings) == 4 * 60
    assert all(s.games == 2 for s in standings.standings)
    # The stream showed every change: each round paired, each game ended.
    assert [m.tournament.current_round for m in messages] == sorted(
        m.tournament.current_round for m in messages
    )
    assert not messages[0].standings.final
    assert client.standings(created.name) == standings
    assert client.get_tournament(created.name) == tournament

    # Every game ended normally: no bot missed a decision.
    games = [g for r in tournament.paired_rounds for t in r.tables for g in t.games]
    assert len(games) == 4 and all(g.ended for g in games)
    for g in games:
        game = client.get_game(g.game)
        assert game.ending.reason == pb.END_REASON_NORMAL, (g.game, game.ending)
        assert [p.account for p in game.players] == list(g.seats)
    # Each bot heard of both its rounds and of its games' ends, over its stream.
    for name, bot in zip(four_bots.names, four_bots.bots, strict=True):
        mine = {g.game for g in games if f"players/{name}" in g.seats}
        wait_for(lambda b=bot, m=mine: m <= set(b.record.ended), f"{name} saw its games end")
        rounds = [(r.tournament, r.round) for r in bot.record.rounds]
        assert rounds == [(created.name, 1), (created.name, 2)], rounds
        assert all(len(r.table) == 2 and len(r.games) == 1 for r in bot.record.rounds)
        assert bot.record.moved_on == {}
        assert bot.record.actions > 0

    # The signed archive: a tar of the tournament's files and every game's.
    archive = client.export_tournament_archive(created.name)
    assert len(archive) > 1024
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        names = set(tar.getnames())
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert {"manifest.json", "signature", "tournament/standings.json"} <= names
    for g in games:
        assert f"{g.game}/record.json" in names
    assert manifest["kind"] == "tournament"
    assert manifest["subject"] == created.name.removeprefix("tournaments/")

    # Rated: each bot played two rated duels.
    wait_for(
        lambda: len(client.rating_history(four_bots.names[0])) == 2,
        "the ratings follow the games",
    )
    history = client.rating_history(four_bots.names[0])
    assert all(c.pool == pb.RATING_POOL_DUEL for c in history)
    board = client.leaderboard("duel", limit=1000)
    ranked = {e.player for e in board}
    assert {f"players/{n}" for n in four_bots.names} <= ranked
    assert [e.rank for e in board] == list(range(1, len(board) + 1))
    player = client.get_player(four_bots.names[0])
    assert player.duel_rating.games == 2
    listed = {t.name for t in client.all_tournaments(page_size=1)}
    assert created.name in listed


def test_house_bots_play_a_round_robin_alone_to_its_end(league_client: GameClient) -> None:
    client = league_client
    boss = organiser(client)
    with pytest.raises(GameError) as refused:
        client.create_tournament(boss, [], house_bots=["greedy", "grandmaster"], time_control=CLOCK)
    assert (refused.value.code, refused.value.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        Reason.UNKNOWN_BOT_LEVEL,
    )
    created = client.create_tournament(
        boss, [], house_bots=["random", "random"], format="round_robin", time_control=CLOCK
    )
    assert list(created.participants) == ["players/random bot 1", "players/random bot 2"]
    assert [(b.player, b.level) for b in created.house_bots] == [
        ("players/random bot 1", "random"),
        ("players/random bot 2", "random"),
    ]
    last = follow_to_the_end(client, created.name)[-1]
    assert last.standings.final
    assert [s.games for s in last.standings.standings] == [1, 1]


def test_a_withdrawn_player_is_never_paired_again_and_its_games_resign(
    league_client: GameClient, four_bots: Bots
) -> None:
    client = league_client
    boss = organiser(client)
    created = client.create_tournament(
        boss, four_bots.names, title="Withdrawals", rounds=2, time_control=CLOCK
    )
    leaving = f"players/{four_bots.names[3]}"
    # Only the tournament's organiser withdraws a player.
    other = organiser(client)
    with pytest.raises(GameError) as refused:
        client.withdraw_player(created.name, leaving, other)
    assert refused.value.reason == Reason.NOT_ORGANISER
    after = client.withdraw_player(created.name, leaving, boss)
    assert list(after.withdrawn) == [leaving]
    with pytest.raises(GameError) as twice:
        client.withdraw_player(created.name, leaving, boss)
    assert (twice.value.code, twice.value.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        Reason.TOURNAMENT_STATE,
    )
    last = follow_to_the_end(client, created.name)[-1]
    assert not four_bots.failures, four_bots.failures
    assert last.tournament.status == pb.TOURNAMENT_STATUS_FINISHED
    second = last.tournament.paired_rounds[1]
    assert all(leaving not in t.players for t in second.tables)
    assert leaving not in second.byes
    standing = next(s for s in last.standings.standings if s.player == leaving)
    assert standing.withdrawn
