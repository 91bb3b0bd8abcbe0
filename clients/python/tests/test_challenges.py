"""Challenges against the real server: how registered players agree to a
game (offer, accept, decline, cancel, seeks), and registered bots that
accept the challenges naming their player, or leave them to a person."""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Callable

import grpc
import pytest
from server_process import ServerProcess

from carcassonne_client import GameClient, GameError, Reason, RegisteredBot, pb, random_policy
from carcassonne_client.registered import BotRecord

WAIT_S = 60.0


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def rejection(call: Callable[[], object]) -> GameError:
    with pytest.raises(GameError) as raised:
        call()
    return raised.value


def refused(call: Callable[[], object]) -> tuple[grpc.StatusCode, str | None]:
    error = rejection(call)
    return error.code, error.reason


def test_a_named_player_accepts_and_the_game_starts_with_everyone_in_their_seats(
    league_client: GameClient,
) -> None:
    ada, brun, cleo = (league_client.register_player(unique(n)) for n in ("Ada", "Brun", "Cleo"))
    request_id = uuid.uuid4().hex
    offer = league_client.create_challenge(
        ada.api_key, [ada.name, brun.name], rated=True, request_id=request_id
    )
    assert offer.status == pb.CHALLENGE_STATUS_OPEN
    assert offer.challenger == ada.name
    assert [(s.player, s.accepted) for s in offer.seats] == [(ada.name, True), (brun.name, False)]
    assert offer.rated and not offer.game
    lasts_ms = offer.expire_time_ms - offer.create_time_ms
    assert abs(lasts_ms - 3_600_000) < 10_000, "an hour by default"
    # A retry is the same challenge; the bare id names it too.
    again = league_client.create_challenge(
        ada.api_key, [ada.name, brun.name], rated=True, request_id=request_id
    )
    assert again.name == offer.name
    assert league_client.get_challenge(offer.name.removeprefix("challenges/")) == offer
    # Listed for the two players in it, not for Cleo, nor without a key.
    assert offer.name in [c.name for c in league_client.list_challenges(brun.api_key)]
    assert offer.name in [c.name for c in league_client.list_challenges(ada.api_key)]
    assert offer.name not in [c.name for c in league_client.list_challenges(cleo.api_key)]
    assert offer.name not in [c.name for c in league_client.list_challenges()]
    # Nobody takes Brun's seat but Brun; the challenger holds hers already.
    assert refused(lambda: league_client.accept_challenge(offer.name, cleo.api_key)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        Reason.NOT_INVITED,
    )
    assert refused(lambda: league_client.accept_challenge(offer.name, ada.api_key)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        Reason.ALREADY_SEATED,
    )
    accepted = league_client.accept_challenge(offer.name, brun.api_key)
    assert accepted.status == pb.CHALLENGE_STATUS_ACCEPTED
    assert all(s.accepted for s in accepted.seats)
    game = league_client.get_game(accepted.game)
    assert game.rated
    assert [p.account for p in game.players] == [ada.name, brun.name]
    assert league_client.get_challenge(offer.name) == accepted
    # Once started, it is closed: no more listed, nor accepted.
    assert offer.name not in [c.name for c in league_client.list_challenges(brun.api_key)]
    assert refused(lambda: league_client.accept_challenge(offer.name, brun.api_key)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        Reason.CHALLENGE_CLOSED,
    )
    # The players act in it with their keys.
    legal = league_client.legal_actions(accepted.game, ada.api_key)
    league_client.act(accepted.game, ada.api_key, legal.version, legal.actions[0])


def test_a_challenge_is_declined_by_its_named_player_or_cancelled_by_its_challenger(
    league_client: GameClient,
) -> None:
    ada, brun, cleo = (league_client.register_player(unique(n)) for n in ("Ada", "Brun", "Cleo"))
    declined = league_client.create_challenge(ada.api_key, [ada.name, brun.name])
    assert refused(lambda: league_client.decline_challenge(declined.name, cleo.api_key)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        Reason.NOT_INVITED,
    )
    assert refused(lambda: league_client.decline_challenge(declined.name, ada.api_key)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        Reason.CHALLENGER_DECLINES,
    )
    answer = league_client.decline_challenge(declined.name, brun.api_key)
    assert (answer.status, answer.declined_by) == (pb.CHALLENGE_STATUS_DECLINED, brun.name)
    assert not answer.game
    assert refused(lambda: league_client.accept_challenge(declined.name, brun.api_key)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        Reason.CHALLENGE_CLOSED,
    )

    cancelled = league_client.create_challenge(ada.api_key, [ada.name, brun.name])
    assert refused(lambda: league_client.cancel_challenge(cancelled.name, brun.api_key)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        Reason.NOT_CHALLENGER,
    )
    answer = league_client.cancel_challenge(cancelled.name, ada.api_key)
    assert answer.status == pb.CHALLENGE_STATUS_CANCELLED
    assert league_client.get_challenge(cancelled.name).status == pb.CHALLENGE_STATUS_CANCELLED

    missing = rejection(lambda: league_client.get_challenge("challenges/nosuchchallenge"))
    assert (missing.code, missing.reason) == (
        grpc.StatusCode.NOT_FOUND,
        Reason.CHALLENGE_NOT_FOUND,
    )
    assert missing.metadata["name"] == "challenges/nosuchchallenge"
    # Without a key of a player, nothing is offered.
    no_key = rejection(lambda: league_client.create_challenge("", [ada.name, brun.name]))
    assert no_key.code == grpc.StatusCode.UNAUTHENTICATED


def test_an_open_seat_is_a_seek_any_registered_player_takes(league_client: GameClient) -> None:
    ada, dan = (league_client.register_player(unique(n)) for n in ("Ada", "Dan"))
    seek = league_client.create_challenge(
        ada.api_key,
        [ada.name, pb.ChallengeSeat(open=True), pb.ChallengeSeat(bot="greedy")],
        time_control=pb.TimeControl(decision_ms=60_000),
        expire_ms=60_000,
    )
    assert [(s.player, s.open, s.bot) for s in seek.seats] == [
        (ada.name, False, ""),
        ("", True, ""),
        ("", False, "greedy"),
    ]
    # Anyone sees the seek, with a key or without.
    assert seek.name in [c.name for c in league_client.list_challenges()]
    assert seek.name in [c.name for c in league_client.list_challenges(dan.api_key)]
    # The bot's seat is no open seat.
    assert refused(lambda: league_client.accept_challenge(seek.name, dan.api_key, seat=2)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        Reason.SEAT_NOT_OPEN,
    )
    taken = league_client.accept_challenge(seek.name, dan.api_key, seat=1)
    assert taken.status == pb.CHALLENGE_STATUS_ACCEPTED
    assert taken.seats[1].player == dan.name
    game = league_client.get_game(taken.game)
    assert [(p.account, p.bot) for p in game.players] == [
        (ada.name, ""),
        (dan.name, ""),
        ("", "greedy"),
    ]
    assert not game.rated


class Running:
    """A registered bot running in a thread until its limits."""

    def __init__(self, bot: RegisteredBot, **limits: object) -> None:
        self.bot = bot
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, kwargs=limits)
        self.thread.start()
        assert bot.listening.wait(WAIT_S)

    def _run(self, **limits: object) -> None:
        try:
            self.bot.run(**limits)  # type: ignore[arg-type]
        except BaseException as error:  # reported by join()
            self.failure = error

    def join(self) -> BotRecord:
        self.thread.join(timeout=WAIT_S * 2)
        still = self.thread.is_alive()
        self.bot.stop()
        assert not still, "the bot did not finish"
        assert self.failure is None, self.failure
        return self.bot.record


def test_a_bot_that_accepts_challenges_plays_the_games_it_agreed_to(
    league: ServerProcess, league_client: GameClient
) -> None:
    ada, brun = (league_client.register_player(unique(n)) for n in ("Ada", "Brun"))
    # Made before Ada's bot starts: its stream's snapshot holds it.
    before = league_client.create_challenge(brun.api_key, [brun.name, ada.name])
    with (
        GameClient.connect(league.address) as ada_client,
        GameClient.connect(league.address) as brun_client,
    ):
        ada_bot = RegisteredBot(
            ada_client, ada.api_key, random_policy(random.Random(1)), accept_challenges=True
        )
        # Brun's bot plays his seats; his own challenges need no acceptance.
        brun_bot = RegisteredBot(brun_client, brun.api_key, random_policy(random.Random(2)))
        running = [Running(ada_bot, games=2), Running(brun_bot, games=2)]
        # Made while it runs: told live.
        during = league_client.create_challenge(
            brun.api_key, [ada.name, brun.name], time_control=pb.TimeControl(decision_ms=60_000)
        )
        ada_record, brun_record = (r.join() for r in running)

    games = []
    for offer in (before, during):
        challenge = league_client.get_challenge(offer.name)
        assert challenge.status == pb.CHALLENGE_STATUS_ACCEPTED, challenge
        games.append(challenge.game)
    assert ada_record.accepted == [before.name, during.name]
    assert brun_record.accepted == []
    assert set(ada_record.ended) == set(games) == set(brun_record.ended)
    for name in games:
        game = ada_record.ended[name]
        assert game.status == pb.GAME_STATUS_FINISHED
        assert game.ending.reason == pb.END_REASON_NORMAL
        assert {p.account for p in game.players} == {ada.name, brun.name}
    assert ada_record.moved_on == {}
    assert ada_record.actions > 0


def test_a_bot_without_the_option_leaves_the_challenge_to_a_person(
    league: ServerProcess, league_client: GameClient
) -> None:
    ada, brun = (league_client.register_player(unique(n)) for n in ("Ada", "Brun"))
    told: list[pb.Challenge] = []
    with GameClient.connect(league.address) as ada_client:
        bot = RegisteredBot(
            ada_client,
            ada.api_key,
            random_policy(),
            on_message=lambda m: told.append(m.challenge) if m.HasField("challenge") else None,
        )
        # It stops once the challenge has reached it and been handled.
        running = Running(bot, until=lambda: bool(told))
        offer = league_client.create_challenge(brun.api_key, [brun.name, ada.name])
        record = running.join()
    assert [c.name for c in told] == [offer.name]
    assert record.accepted == [] and record.challenges == set()
    still = league_client.get_challenge(offer.name)
    assert still.status == pb.CHALLENGE_STATUS_OPEN
    assert [s.accepted for s in still.seats] == [True, False]
    league_client.cancel_challenge(offer.name, brun.api_key)
