"""Clocks, timeouts, resigning and aborting (docs/rules.md, T-1 to T-11)
through the real server. The tests that wait for a deadline use a limit of
1500 ms per decision, so none waits more than a few seconds."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

import grpc
import pytest

from carcassonne_client import CreatedGame, GameClient, GameError, LegalActions, pb
from carcassonne_client.bot import play_random_game
from carcassonne_client.client import new_request_id, time_control
from carcassonne_client.clocks import ServerClock, clocks, local_now_ms, seat_clock

# A limit per decision short enough to wait for.
SHORT_MS = 1500
# How long past a deadline a test waits for the server's own timeout.
TIMEOUT_SLACK_S = 3.0

_T = TypeVar("_T")


def rejection(call: Callable[[], object]) -> GameError:
    with pytest.raises(GameError) as raised:
        call()
    return raised.value


def wait_until(read: Callable[[], _T], done: Callable[[_T], bool], seconds: float) -> _T:
    """Reads until `done`, for `seconds` at most (then fails)."""
    give_up = time.monotonic() + seconds
    while True:
        value = read()
        if done(value):
            return value
        assert time.monotonic() < give_up, f"not done after {seconds} s: {value}"
        time.sleep(0.05)


def events_since(client: GameClient, created: CreatedGame, version: int) -> list[pb.WatchedEvent]:
    """Every event after `version` up to now, as a watcher gets them."""
    last = client.get_game(created.name, created.tokens[0]).version
    events: list[pb.WatchedEvent] = []
    if last == version:
        return events
    watch = client.watch_game(created.name, created.tokens[0], from_version=version, timeout=10)
    for message in watch:
        if message.WhichOneof("message") == "event":
            events.append(message.event)
            if message.event.event.version >= last:
                break
    return events


def first_placement(legal: LegalActions) -> pb.Action:
    """The placement the server takes for a seat under auto (T-7): the
    smallest x, then y, then rotation."""
    placements = [a for a in legal.actions if a.HasField("place_tile")]
    return min(
        placements,
        key=lambda a: (
            a.place_tile.position.x,
            a.place_tile.position.y,
            a.place_tile.rotation,
        ),
    )


def test_time_control_builds_what_the_server_keeps(client: GameClient) -> None:
    control = time_control(
        main_ms=90_000, increment_ms=2_000, decision_ms=20_000, on_timeout="auto"
    )
    assert control == pb.TimeControl(
        main_ms=90_000, increment_ms=2_000, decision_ms=20_000, on_timeout=pb.TIMEOUT_RULE_AUTO
    )
    assert time_control(decision_ms=5).on_timeout == pb.TIMEOUT_RULE_FORFEIT
    with pytest.raises(ValueError):
        time_control(main_ms=1, on_timeout="lose")  # type: ignore[arg-type]

    created = client.create_game(["Ada", "Bob"], time_control=control)
    game = created.game
    assert game.time_control == control
    assert [p.time_left_ms for p in game.players] == [90_000, 90_000]
    # The first decision's deadline: its limit, which comes before the main time's end.
    assert game.pending.deadline_ms == game.clock_time_ms + 20_000

    plain = client.create_game(["Ada", "Bob"])
    assert not plain.game.HasField("time_control")
    assert plain.game.pending.deadline_ms == 0
    assert not any(p.HasField("time_left_ms") for p in plain.game.players)

    # The server checks the numbers: an increment needs a main time.
    error = rejection(
        lambda: client.create_game(["Ada", "Bob"], time_control=time_control(increment_ms=5))
    )
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.metadata["field"].startswith("time_control")


def test_a_clocked_game_is_played_to_its_end_with_time_to_spare(client: GameClient) -> None:
    control = time_control(main_ms=120_000, increment_ms=1_000, decision_ms=30_000)
    created = client.create_game(["Ada", "Bob", "Cy"], time_control=control)
    deadlines: list[int] = []
    stored: list[int] = []

    def on_decision(legal: LegalActions) -> None:
        now = local_now_ms()
        assert legal.pending.deadline_ms > now, "every decision has time left when the bot reads it"
        # The seat's decision runs against both the limit and its main time.
        assert legal.pending.deadline_ms <= now + 30_000
        deadlines.append(legal.pending.deadline_ms)

    def on_response(response: pb.ActResponse) -> None:
        stored.append(response.events[0].time_ms)
        # One clock runs: that of the seat that owes the next decision.
        pending = response.game.pending
        for clock in clocks(response.game):
            assert clock.main_left_ms is not None and clock.main_left_ms > 0
            owes = pending.kind != pb.DECISION_KIND_UNSPECIFIED and clock.seat == pending.seat
            assert clock.running == owes

    game, steps = play_random_game(
        client, created, random.Random(3), on_decision=on_decision, on_response=on_response
    )

    assert steps == len(deadlines) == len(stored) > 100
    assert all(t < d for t, d in zip(stored, deadlines, strict=True)), "stored before its deadline"
    assert game.status == pb.GAME_STATUS_FINISHED
    assert game.ending.reason == pb.END_REASON_NORMAL
    assert game.pending.deadline_ms == 0
    for player in game.players:
        assert player.status == pb.SEAT_STATUS_PLAYING
        # Each seat got an increment per turn: more than it started with.
        assert player.time_left_ms > 120_000
        clock = seat_clock(game, player.seat)
        assert (clock.main_left_ms, clock.decision_left_ms, clock.running) == (
            player.time_left_ms,
            None,
            False,
        )
    # Ranks by score, equal scores sharing one; the winners are ranked first.
    for a in game.players:
        assert a.rank == 1 + sum(1 for b in game.players if b.score > a.score)
    assert sorted(game.winners) == [p.seat for p in game.players if p.rank == 1]


def test_a_seats_clock_is_read_from_a_game_and_from_a_watched_event(client: GameClient) -> None:
    control = time_control(main_ms=100_000, decision_ms=40_000)
    created = client.create_game(["Ada", "Bob"], time_control=control)
    start = created.game
    at = start.clock_time_ms

    # Seat 0 decides first: its clock runs; seat 1's stands.
    mine = seat_clock(start, 0, now_ms=at + 700)
    assert mine == seat_clock(start, 0, now_ms=at + 700)
    assert (mine.main_left_ms, mine.decision_left_ms, mine.running) == (99_300, 39_300, True)
    assert mine.deadline_ms == start.pending.deadline_ms == at + 40_000
    theirs = seat_clock(start, 1, now_ms=at + 700)
    assert (theirs.main_left_ms, theirs.decision_left_ms, theirs.running) == (100_000, None, False)
    # Never below 0.
    late = seat_clock(start, 0, now_ms=at + 200_000)
    assert (late.main_left_ms, late.decision_left_ms) == (0, 0)

    legal = client.legal_actions(created.name, created.tokens[0])
    placed = client.act(created.name, created.tokens[0], legal.version, legal.actions[0])
    game = placed.game
    (watched,) = events_since(client, created, legal.version)
    assert watched.event.version == game.version
    assert watched.event.time_ms == game.clock_time_ms
    assert list(watched.time_left_ms) == [p.time_left_ms for p in game.players]
    assert watched.time_left_ms[0] < 100_000, "seat 0's clock ran while it decided"
    now = game.clock_time_ms + 250
    for seat in (0, 1):
        assert seat_clock(watched, seat, now_ms=now) == seat_clock(game, seat, now_ms=now)
    # Seat 0 owes its follower decision: a new limit from the placement on.
    follower = seat_clock(watched, 0, now_ms=now)
    assert follower.decision_left_ms == 40_000 - 250
    assert follower.main_left_ms == watched.time_left_ms[0] - 250
    # Read now, by this machine's clock: a little less than just after the action.
    assert 0 < seat_clock(game, 0).main_left_ms <= watched.time_left_ms[0]  # type: ignore[operator]
    with pytest.raises(ValueError):
        seat_clock(game, 2)

    # The ServerClock's estimate is never earlier than the server's time.
    server = ServerClock()
    sent = server.local_ms()
    answer = client.resign(created.name, created.tokens[1], game.version)
    server.observe_act(sent, answer)
    assert server.offset_ms is not None
    assert server.now_ms() >= answer.events[0].time_ms


def test_a_resignation_ends_a_two_player_game_for_the_other_seat(client: GameClient) -> None:
    created = client.create_game(["Ada", "Bob"])
    legal = client.legal_actions(created.name, created.tokens[0])
    placed = client.act(created.name, created.tokens[0], legal.version, legal.actions[0])
    # Seat 1 resigns while seat 0 still decides (its follower).
    assert placed.game.pending.seat == 0
    request_id = new_request_id()
    answer = client.resign(created.name, created.tokens[1], placed.version, request_id=request_id)

    (event,) = answer.events
    assert event.WhichOneof("event") == "resigned"
    assert event.seat == 1 and event.seat_out == 1 and event.finished
    game = answer.game
    assert game.status == pb.GAME_STATUS_FINISHED
    assert game.ending == pb.Ending(reason=pb.END_REASON_RESIGNED, seat=1)
    assert list(game.winners) == [0]
    assert [p.rank for p in game.players] == [1, 2]
    assert [p.status for p in game.players] == [pb.SEAT_STATUS_PLAYING, pb.SEAT_STATUS_RESIGNED]
    assert client.legal_actions(created.name, created.tokens[0]).finished

    # Retried with its request id, the resignation is answered once.
    again = client.resign(created.name, created.tokens[1], placed.version, request_id=request_id)
    assert again.version == answer.version
    assert client.get_game(created.name).version == answer.version
    # Nothing is played after the end.
    error = rejection(lambda: client.resign(created.name, created.tokens[0], answer.version))
    assert error.reason == "GAME_FINISHED"


def test_an_abort_before_any_move_ends_the_game_with_no_result(client: GameClient) -> None:
    created = client.create_game(["Ada", "Bob", "Cy"])
    answer = client.abort(created.name, created.tokens[2], created.game.version)
    (event,) = answer.events
    assert event.WhichOneof("event") == "aborted" and event.seat == 2 and event.finished
    game = client.get_game(created.name)
    assert game.status == pb.GAME_STATUS_FINISHED
    assert game.ending == pb.Ending(reason=pb.END_REASON_ABORTED, seat=2)
    assert list(game.winners) == []
    assert [p.rank for p in game.players] == [0, 0, 0]


def test_an_abort_is_refused_once_every_seat_has_decided(client: GameClient) -> None:
    created = client.create_game(["Ada", "Bob"])
    name, tokens = created.name, created.tokens

    def play_one() -> LegalActions:
        legal = client.legal_actions(name, tokens[0])
        client.act(name, tokens[legal.pending.seat], legal.version, legal.actions[0])
        return client.legal_actions(name, tokens[0])

    # Seat 0 places its tile and decides on its follower; seat 1 places.
    play_one()
    now = play_one()
    assert now.pending.seat == 1
    now = play_one()
    error = rejection(lambda: client.abort(name, tokens[0], now.version))
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION
    assert error.reason == "RULE_VIOLATION"
    assert error.metadata["rule"] == "T-9"
    game = client.get_game(name, tokens[0])
    assert game.version == now.version and game.status == pb.GAME_STATUS_RUNNING

    # While seat 1 had not decided yet, the same abort ended the game.
    other = client.create_game(["Ada", "Bob"])
    legal = client.legal_actions(other.name, other.tokens[0])
    placed = client.act(other.name, other.tokens[0], legal.version, legal.actions[0])
    ended = client.abort(other.name, other.tokens[0], placed.version)
    assert ended.game.ending.reason == pb.END_REASON_ABORTED


def test_under_forfeit_the_server_times_a_seat_out_by_itself(client: GameClient) -> None:
    control = time_control(decision_ms=SHORT_MS, on_timeout="forfeit")
    created = client.create_game(["Ada", "Bob"], time_control=control)
    legal = client.legal_actions(created.name, created.tokens[0])
    deadline = legal.pending.deadline_ms
    assert 0 < deadline - local_now_ms() <= SHORT_MS

    # Nobody acts; reading changes nothing, the server's timekeeper does it.
    game = wait_until(
        lambda: client.get_game(created.name, created.tokens[1]),
        lambda g: g.status == pb.GAME_STATUS_FINISHED,
        SHORT_MS / 1000 + TIMEOUT_SLACK_S,
    )
    assert game.ending == pb.Ending(reason=pb.END_REASON_OUT_OF_TIME, seat=0)
    assert list(game.winners) == [1]
    assert [p.rank for p in game.players] == [2, 1]
    assert [p.status for p in game.players] == [pb.SEAT_STATUS_OUT_OF_TIME, pb.SEAT_STATUS_PLAYING]
    (timed_out,) = events_since(client, created, legal.version)
    assert timed_out.event.WhichOneof("event") == "timed_out"
    assert timed_out.event.timed_out.seat == 0 and timed_out.event.seat_out == 0
    assert timed_out.event.abandoned == legal.pending.tile, "the drawn tile left the game"
    assert timed_out.event.time_ms >= deadline, "never before the deadline"
    assert timed_out.event.finished
    assert timed_out.ending == game.ending

    # The seat's action, sent now on the version it read, is refused.
    late = rejection(
        lambda: client.act(created.name, created.tokens[0], legal.version, legal.actions[0])
    )
    assert late.code == grpc.StatusCode.FAILED_PRECONDITION
    assert late.reason == "OUT_OF_TIME"
    assert late.metadata == {"seat": "0", "deadline_ms": str(deadline), "rule": "T-4"}


def test_an_action_sent_at_its_deadline_is_refused_and_the_timeout_stored(
    client: GameClient,
) -> None:
    control = time_control(decision_ms=SHORT_MS)
    created = client.create_game(["Ada", "Bob"], time_control=control)
    legal = client.legal_actions(created.name, created.tokens[0])
    deadline = legal.pending.deadline_ms
    time.sleep(max(0, deadline - local_now_ms()) / 1000)
    assert local_now_ms() >= deadline
    # Whether it comes just before the timekeeper or just after it.
    late = rejection(
        lambda: client.act(created.name, created.tokens[0], legal.version, legal.actions[0])
    )
    assert late.reason == "OUT_OF_TIME", late
    assert late.metadata["deadline_ms"] == str(deadline)
    assert late.metadata["seat"] == "0"
    game = client.get_game(created.name, created.tokens[0])
    assert game.version == legal.version + 1, "the timeout alone was stored"
    assert game.ending.reason == pb.END_REASON_OUT_OF_TIME


def test_under_auto_the_server_decides_for_the_seat_and_the_game_goes_on(
    client: GameClient,
) -> None:
    control = time_control(decision_ms=SHORT_MS, on_timeout="auto")
    created = client.create_game(["Ada", "Bob"], time_control=control)
    legal = client.legal_actions(created.name, created.tokens[0])
    now = wait_until(
        lambda: client.legal_actions(created.name, created.tokens[1]),
        lambda la: la.pending.seat == 1,
        SHORT_MS / 1000 + TIMEOUT_SLACK_S,
    )
    events = events_since(client, created, legal.version)
    timed_out = events[0].event
    assert timed_out.WhichOneof("event") == "timed_out" and timed_out.timed_out.seat == 0
    assert timed_out.time_ms >= legal.pending.deadline_ms
    assert not timed_out.HasField("seat_out") and not timed_out.finished
    # The first legal placement, then no follower.
    assert list(timed_out.decided_for_seat) == [
        first_placement(legal),
        pb.Action(place_follower=pb.PlaceFollower()),
    ]
    assert events[-1].pending.seat == 1 and events[-1].pending.deadline_ms > 0
    game = client.get_game(created.name, created.tokens[0])
    assert game.status == pb.GAME_STATUS_RUNNING
    assert [p.status for p in game.players] == [pb.SEAT_STATUS_PLAYING] * 2

    # Seat 0's own answer, too late, is refused with the same reason.
    late = rejection(
        lambda: client.act(created.name, created.tokens[0], legal.version, legal.actions[0])
    )
    assert late.reason == "OUT_OF_TIME"
    assert late.metadata["seat"] == "0"
    # Seat 1 resigns, so that the server stops timing out an empty table.
    ended = client.resign(created.name, created.tokens[1], now.version)
    assert ended.game.ending == pb.Ending(reason=pb.END_REASON_RESIGNED, seat=1)
    assert list(ended.game.winners) == [0]


def test_request_ids_beginning_with_a_tilde_are_the_servers_own(client: GameClient) -> None:
    created = client.create_game(["Ada", "Bob"])
    legal = client.legal_actions(created.name, created.tokens[0])
    calls: list[Callable[[], object]] = [
        lambda: client.act(
            created.name, created.tokens[0], legal.version, legal.actions[0], request_id="~mine"
        ),
        lambda: client.resign(created.name, created.tokens[1], legal.version, request_id="~r1"),
        lambda: client.abort(created.name, created.tokens[1], legal.version, request_id="~a1"),
        lambda: client.create_game(["Ada", "Bob"], request_id="~" + new_request_id()),
    ]
    for call in calls:
        error = rejection(call)
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT
        assert error.reason == "INVALID_ARGUMENT"
        assert error.metadata["field"] == "request_id"
    assert client.get_game(created.name).version == legal.version


def test_the_server_clock_estimate_is_the_least_bound_seen() -> None:
    local = [0]
    server = ServerClock(local=lambda: local[0])
    local[0] = 5_000
    assert server.now_ms() == 5_000, "no offset before anything is seen"
    # Stored 300 ms after it was sent: the server is at most 300 ms ahead.
    server.observe(1_000, 1_300)
    assert server.now_ms() == 5_300
    server.observe(2_000, 2_100)
    server.observe(3_000, 3_900)
    assert server.offset_ms == 100 and server.now_ms() == 5_100
    # A server behind this machine's clock.
    server.observe(4_000, 3_000)
    assert server.now_ms() == 4_000
