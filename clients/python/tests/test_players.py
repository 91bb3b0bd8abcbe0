"""Registered players against the real server: registration, organisers,
the refusals' reasons, consent (a creation seats only its caller), and the
player's one stream, which resumes after a reconnect without losing or
repeating a message."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path

import grpc
import pytest
from conftest import ADMIN_KEY, agreed_game
from server_process import CLIENT_DIR, ServerProcess

from carcassonne_client import (
    GameClient,
    GameError,
    PlayerStream,
    Reason,
    RegisteredBot,
    pb,
    random_policy,
    time_control,
)

# Long enough for a loaded machine, short enough to fail a stalled stream.
WAIT_S = 30.0


def unique(prefix: str) -> str:
    """A player name of its own for each test (names live as long as the
    session's server)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def rejection(call: Callable[[], object]) -> GameError:
    with pytest.raises(GameError) as raised:
        call()
    return raised.value


def next_of(stream: PlayerStream, kind: str) -> pb.WatchPlayerResponse:
    """The next message of `kind`, keep-alives and challenges skipped;
    anything else fails."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        message = next(stream)
        got = message.WhichOneof("message")
        if got in ("keep_alive", "challenge"):
            continue
        assert got == kind, f"expected {kind}, got {message}"
        return message
    raise AssertionError(f"no {kind} within {WAIT_S} s")


def test_registration_shows_the_key_once_and_names_are_unique(
    league_client: GameClient,
) -> None:
    name = unique("Ada")
    registered = league_client.register_player(name)
    assert registered.name == f"players/{name}"
    assert len(registered.api_key) == 64
    assert not registered.player.organiser
    shown = league_client.get_player(name)
    assert shown.name == f"players/{name}"
    assert registered.api_key not in str(shown)
    assert league_client.get_player(f"players/{name}") == shown

    taken = rejection(lambda: league_client.register_player(name.upper()))
    assert (taken.code, taken.reason) == (grpc.StatusCode.ALREADY_EXISTS, Reason.NAME_TAKEN)
    assert taken.metadata["name"] == f"players/{name.upper()}"
    bad = rejection(lambda: league_client.register_player("no spaces"))
    assert (bad.code, bad.reason) == (grpc.StatusCode.INVALID_ARGUMENT, Reason.INVALID_ARGUMENT)


def test_only_the_admin_key_makes_organisers(league_client: GameClient) -> None:
    name = unique("Boss")
    key = league_client.register_player(name).api_key
    refused = rejection(lambda: league_client.set_organiser(name, key))
    assert (refused.code, refused.reason) == (grpc.StatusCode.PERMISSION_DENIED, Reason.NOT_ADMIN)
    promoted = league_client.set_organiser(name, ADMIN_KEY)
    assert promoted.organiser
    assert league_client.get_player(name).organiser
    assert not league_client.set_organiser(name, ADMIN_KEY, organiser=False).organiser


def test_refused_calls_carry_their_reasons(league_client: GameClient) -> None:
    player = league_client.register_player(unique("Cleo"))
    other = league_client.register_player(unique("Dan"))
    clock = time_control(decision_ms=5_000)
    # A player who is no organiser cannot create a tournament.
    not_organiser = rejection(
        lambda: league_client.create_tournament(
            player.api_key, [player.name, other.name], rounds=1, time_control=clock
        )
    )
    assert (not_organiser.code, not_organiser.reason) == (
        grpc.StatusCode.PERMISSION_DENIED,
        Reason.NOT_ORGANISER,
    )
    # A key of nobody, on the player's stream and on a creation.
    with league_client.watch_player("not-a-key-of-anyone") as stream:
        unknown = rejection(lambda: next(stream))
    assert (unknown.code, unknown.reason) == (grpc.StatusCode.UNAUTHENTICATED, Reason.UNKNOWN_KEY)
    unknown = rejection(
        lambda: league_client.create_tournament(
            "not-a-key-of-anyone", [player.name, other.name], rounds=1, time_control=clock
        )
    )
    assert unknown.reason == Reason.UNKNOWN_KEY
    missing = rejection(lambda: league_client.get_player(unique("Nobody")))
    assert (missing.code, missing.reason) == (grpc.StatusCode.NOT_FOUND, Reason.PLAYER_NOT_FOUND)
    assert missing.metadata["name"].startswith("players/Nobody-")
    history = rejection(lambda: league_client.rating_history(unique("Nobody")))
    assert history.reason == Reason.PLAYER_NOT_FOUND
    for call in (
        lambda: league_client.get_tournament("tournaments/nosuchtournament"),
        lambda: league_client.standings("nosuchtournament"),
        lambda: league_client.export_tournament_archive("tournaments/nosuchtournament"),
    ):
        error = rejection(call)
        assert (error.code, error.reason) == (
            grpc.StatusCode.NOT_FOUND,
            Reason.TOURNAMENT_NOT_FOUND,
        )
    # A challenge's seat for a player nobody registered.
    seat = rejection(
        lambda: league_client.create_challenge(player.api_key, [player.name, unique("Nobody")])
    )
    assert (seat.code, seat.reason) == (grpc.StatusCode.NOT_FOUND, Reason.PLAYER_NOT_FOUND)
    with pytest.raises(ValueError):
        league_client.leaderboard("triples")  # type: ignore[arg-type]


def test_every_reason_of_the_server_is_named() -> None:
    """Reason lists every ErrorInfo reason of src/api/status.rs, the one
    table of the server's errors, and nothing else."""
    status_rs = CLIENT_DIR.parents[1] / "src" / "api" / "status.rs"
    table = status_rs.read_text(encoding="utf-8")
    served = set(re.findall(r'\(Code::\w+, "([A-Z_]+)"\)', table))
    assert len(served) >= 25, served
    named = {value for key, value in vars(Reason).items() if key.isupper()}
    assert named == served
    assert all(getattr(Reason, reason) == reason for reason in served)


def test_a_players_seats_take_its_key_and_no_token_is_made(league_client: GameClient) -> None:
    ada = league_client.register_player(unique("Ada"))
    created = league_client.create_game(["Ada", "Guest"], accounts=[ada.name, ""], key=ada.api_key)
    assert created.tokens[0] == "", "no token for a registered player's seat"
    assert created.tokens[1], "a guest seat has its own"
    assert created.game.players[0].account == ada.name
    legal = league_client.legal_actions(created.name, ada.api_key)
    assert legal.pending.seat == 0
    league_client.act(created.name, ada.api_key, legal.version, legal.actions[0])


def test_a_creation_seats_only_its_caller_and_rates_nothing(league_client: GameClient) -> None:
    """The attack of issue 25: seats for registered players, rated, named
    by someone else. Another player's seat is theirs only through a
    challenge they accept."""
    ada = league_client.register_player(unique("Ada"))
    brun = league_client.register_player(unique("Brun"))
    clock = time_control(decision_ms=5_000)
    refused = [
        # Both seats named, with no key, with one of theirs, with a stranger's.
        ([ada.name, brun.name], None, False),
        ([ada.name, brun.name], ada.api_key, False),
        ([ada.name, ""], brun.api_key, False),
        # Ada alone, without her key; Brun with Ada's.
        ([ada.name, ""], None, False),
        (["", brun.name], ada.api_key, False),
        # Rated: never by a creation, even of the caller's own seat.
        ([ada.name, ""], ada.api_key, True),
        ([], None, True),
    ]
    for accounts, key, rated in refused:
        create = partial(
            league_client.create_game,
            ["A", "B"],
            accounts=accounts,
            key=key,
            rated=rated,
            time_control=clock,
        )
        error = rejection(create)
        assert (error.code, error.reason) == (
            grpc.StatusCode.PERMISSION_DENIED,
            Reason.CONSENT_REQUIRED,
        ), (accounts, key is not None, rated)
    # Nothing happened to Brun: no game, no rating.
    assert not league_client.get_player(brun.name).HasField("duel_rating")
    with league_client.watch_player(brun.api_key, keep_alive_ms=1000) as stream:
        first = next(stream)
    assert first.WhichOneof("message") == "keep_alive", first


def test_the_player_stream_resumes_after_a_reconnect_losing_and_repeating_nothing(
    league_client: GameClient,
) -> None:
    ada = league_client.register_player(unique("Ada"))
    brun = league_client.register_player(unique("Brun"))
    resumes: list[str] = []
    stream = league_client.watch_player(
        ada.api_key, keep_alive_ms=1000, on_resume=lambda r: resumes.append(r.why)
    )
    with stream:
        stream.open()
        # A game in which Ada decides first: its start, then her decision.
        first = agreed_game(league_client, [ada, brun])
        started = next_of(stream, "game_started")
        assert started.game_started.game.name == first
        assert started.game_started.seat == 0
        decision = next_of(stream, "decision").decision
        assert (decision.game, decision.seat) == (first, 0)
        before = stream.position
        assert before > 0

        # The connection drops; meanwhile two more games are agreed and
        # start (Brun's challenge, then Ada's), and Ada plays her first
        # decision of the first game elsewhere.
        stream.reconnect()
        second = agreed_game(league_client, [brun, ada])
        third = agreed_game(league_client, [ada, brun])
        legal = decision.legal
        league_client.act(first, ada.api_key, legal.version, legal.actions[0])

        # The new stream opens with a snapshot of the decisions pending;
        # dropped again right after it, it resumes from the position before
        # the first drop still: a snapshot does not move it.
        snapshot = next(stream)
        assert snapshot.snapshot and snapshot.WhichOneof("message") == "decision"
        assert stream.position == before
        stream.reconnect()

        # After the reconnection: the snapshot's decisions Ada has not
        # seen, then every message after the last position seen, once.
        seen: list[tuple[str, str, bool]] = [
            ("decision", snapshot.decision.game, True),
        ]
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and not (
            ("game_started", second, False) in seen
            and ("game_started", third, False) in seen
            and any(k == "decision" and g == third for k, g, _ in seen)
            and any(k == "decision" and g == first for k, g, _ in seen)
        ):
            message = next(stream)
            kind = message.WhichOneof("message")
            if kind == "keep_alive":
                continue
            if not message.snapshot:
                assert message.position > before, "nothing from before the reconnection again"
            if kind == "challenge":
                # The games' challenges: the challenge's game and status.
                game = f"{message.challenge.game or '-'} {message.challenge.status}"
                seen.append((kind, game, message.snapshot))
                continue
            body = getattr(message, kind)
            game = body.game if isinstance(body.game, str) else body.game.name
            seen.append((kind, game, message.snapshot))
        assert resumes == ["reconnect", "reconnect"]
        assert stream.resumes == 2
        started_games = [g for k, g, _ in seen if k == "game_started"]
        assert sorted(started_games) == sorted([second, third]), seen
        decisions = [g for k, g, _ in seen if k == "decision"]
        # The first game's new decision (its follower decision) and the
        # third game's first one, each once: no decision is lost or repeated.
        assert sorted(decisions) == sorted([first, third]), seen
        # Each of the two challenges made meanwhile, open then accepted
        # with its game, once each.
        challenges = [g for k, g, _ in seen if k == "challenge"]
        open_, accepted = pb.CHALLENGE_STATUS_OPEN, pb.CHALLENGE_STATUS_ACCEPTED
        assert challenges == [
            f"- {open_}",
            f"{second} {accepted}",
            f"- {open_}",
            f"{third} {accepted}",
        ], seen
        assert stream.position > before


def test_the_player_stream_tells_each_stage_of_a_challenge_once_across_reconnects(
    league_client: GameClient,
) -> None:
    """A challenge waiting for the player is in every opening snapshot, and
    its events after the position resumed from may be older than the
    snapshot: the stream yields each stage once, in order."""
    ada, brun, cleo = (league_client.register_player(unique(n)) for n in ("Ada", "Brun", "Cleo"))
    told: list[tuple[int, int, bool]] = []

    def until_quiet() -> None:
        """Records the challenge messages up to the next keep-alive: by
        then the stream has brought everything before it."""
        while True:
            message = next(stream)
            kind = message.WhichOneof("message")
            if kind == "keep_alive":
                return
            assert kind == "challenge", message
            challenge = message.challenge
            taken = sum(seat.accepted for seat in challenge.seats)
            told.append((challenge.status, taken, message.snapshot))

    open_, accepted = pb.CHALLENGE_STATUS_OPEN, pb.CHALLENGE_STATUS_ACCEPTED
    with league_client.watch_player(ada.api_key, keep_alive_ms=1000) as stream:
        stream.open()
        offer = league_client.create_challenge(brun.api_key, [brun.name, ada.name, cleo.name])
        until_quiet()
        assert told == [(open_, 1, False)]
        # Cleo accepts while Ada's connection is down: the new snapshot
        # shows the challenge as it is now, and the events after the last
        # position seen bring Cleo's acceptance again.
        stream.reconnect()
        league_client.accept_challenge(offer.name, cleo.api_key)
        until_quiet()
        assert told[1:] == [(open_, 2, True)]
        # Down again with nothing new: the snapshot repeats it.
        stream.reconnect()
        until_quiet()
        assert told[2:] == []
        # Ada accepts: the game starts.
        league_client.accept_challenge(offer.name, ada.api_key)
        message = next(stream)
        assert message.WhichOneof("message") == "challenge"
        assert message.challenge.status == accepted and message.challenge.game, message
        assert next_of(stream, "game_started").game_started.game.name == message.challenge.game
    assert stream.resumes == 2


def test_a_registered_bot_plays_many_games_over_one_stream_through_reconnects(
    league: ServerProcess, league_client: GameClient
) -> None:
    """Two bots play six games without clocks: a decision lost in a
    reconnection would stall its game forever."""
    ada = league_client.register_player(unique("Ada"))
    brun = league_client.register_player(unique("Brun"))
    games = 6
    clients = [GameClient.connect(league.address) for _ in range(2)]
    ada_bot = RegisteredBot(clients[0], ada.api_key, random_policy())
    brun_bot = RegisteredBot(clients[1], brun.api_key, random_policy())

    # Ada's connection drops after every 40 of her actions, mid-game.
    def drop(message: pb.WatchPlayerResponse) -> None:
        if message.WhichOneof("message") == "decision" and ada_bot.record.actions % 40 == 39:
            ada_bot.stream.reconnect()
            time.sleep(0.05)  # Brun's moves and other games go on meanwhile

    ada_bot.on_message = drop
    failures: list[BaseException] = []

    def run(bot: RegisteredBot) -> None:
        try:
            bot.run(games=games)
        except BaseException as error:  # reported by the test
            failures.append(error)

    threads = [threading.Thread(target=run, args=(b,)) for b in (ada_bot, brun_bot)]
    try:
        for thread in threads:
            thread.start()
        for bot in (ada_bot, brun_bot):
            assert bot.listening.wait(WAIT_S)
        names = []
        for n in range(games):
            seats = [ada, brun] if n % 2 == 0 else [brun, ada]
            names.append(agreed_game(league_client, seats))
        for thread in threads:
            thread.join(timeout=240)
        assert not failures, failures
        assert not any(t.is_alive() for t in threads), (
            f"the games did not all end: Ada saw {len(ada_bot.record.ended)}, "
            f"Brun {len(brun_bot.record.ended)}"
        )
    finally:
        for bot in (ada_bot, brun_bot):
            bot.stop()
        for thread in threads:
            thread.join(timeout=10)
        for c in clients:
            c.close()

    assert ada_bot.stream.resumes >= 3, "Ada's stream was reconnected mid-way"
    assert set(ada_bot.record.ended) == set(names)
    assert set(ada_bot.record.started) == set(names)
    # Every action of Ada's seats is one she answered from her stream, once.
    stored = 0
    for name in names:
        game = ada_bot.record.ended[name]
        assert game.status == pb.GAME_STATUS_FINISHED
        assert game.ending.reason == pb.END_REASON_NORMAL
        seat = next(p.seat for p in game.players if p.account == ada.name)
        for message in league_client.watch_game(name, from_version=1):
            if message.WhichOneof("message") == "event":
                event = message.event.event
                stored += event.HasField("seat") and event.seat == seat
    assert stored == ada_bot.record.actions
    assert ada_bot.record.moved_on == {}
    assert len(ada_bot.record.decisions) == ada_bot.record.actions


def test_the_player_stream_resumes_after_the_server_restarts(tmp_path: Path) -> None:
    """A bot keeps playing its game across a restart of the server: its
    stream reopens from the last position seen once the server is back."""
    first = ServerProcess(tmp_path / "data", tmp_path / "server.log", admin_key=ADMIN_KEY)
    servers = [first]
    try:
        with GameClient.connect(first.address) as client:
            ada = client.register_player("Ada")
            brun = client.register_player("Brun")
            created = agreed_game(client, [ada, brun])
        bots = []
        threads = []
        failures: list[BaseException] = []
        clients = [GameClient.connect(first.address) for _ in range(2)]
        for c, key in zip(clients, (ada.api_key, brun.api_key), strict=True):
            bot = RegisteredBot(c, key, random_policy(), act_attempts=40, max_reopenings=40)
            # Slow enough that the game is still running at the restart.
            bot.policy = _slowly(bot.policy, 0.01)
            bots.append(bot)

            def run(b: RegisteredBot = bot) -> None:
                try:
                    b.run(games=1)
                except BaseException as error:
                    failures.append(error)

            threads.append(threading.Thread(target=run))
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + WAIT_S
        while bots[0].record.actions < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert bots[0].record.actions >= 10
        assert first.stop() == 0
        servers.append(first.restart())
        for thread in threads:
            thread.join(timeout=120)
        assert not failures, failures
        assert all(name == created for b in bots for name in b.record.ended)
        assert all(len(b.record.ended) == 1 for b in bots), "both saw the game end"
        assert all(b.stream.resumes >= 1 for b in bots)
        final = bots[0].record.ended[created]
        assert final.ending.reason == pb.END_REASON_NORMAL
        for bot in bots:
            bot.stop()
        for c in clients:
            c.close()
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.stop()


def _slowly(policy: Callable[..., pb.Action], pause_s: float) -> Callable[..., pb.Action]:
    def slow(decision: object) -> pb.Action:
        time.sleep(pause_s)
        return policy(decision)

    return slow
