"""Whole games between random bots, played through the real server."""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter

import grpc
import pytest

from carcassonne_client import GameClient, GameError, pb
from carcassonne_client.bot import play_random_game
from carcassonne_client.client import rule_options

CASES = [
    pytest.param(2, False, False, id="2-players-base"),
    pytest.param(4, False, False, id="4-players-base"),
    pytest.param(2, True, True, id="2-players-river-count"),
    pytest.param(4, True, True, id="4-players-river-count"),
]


@pytest.mark.parametrize(("players", "river", "count"), CASES)
def test_random_bots_play_a_whole_game(
    client: GameClient, players: int, river: bool, count: bool
) -> None:
    label = f"{players}-{river}-{count}"
    seed = hashlib.sha256(f"test_games {label}".encode()).digest()
    names = [f"Bot {seat}" for seat in range(players)]
    created = client.create_game(names, rules=rule_options(river=river, count=count), seed=seed)

    start = created.game
    assert start.status == pb.GAME_STATUS_RUNNING
    assert start.seed == "", "the seed must stay secret while the game runs"
    assert start.seed_sha256 == hashlib.sha256(seed).hexdigest()
    assert len(set(created.tokens)) == players, "one distinct token per seat"

    responses: list[pb.ActResponse] = []
    game, steps = play_random_game(
        client, created, random.Random(label), on_response=responses.append
    )

    # The end state.
    assert game.status == pb.GAME_STATUS_FINISHED
    assert game.pending.kind == pb.DECISION_KIND_UNSPECIFIED
    assert client.legal_actions(game.name).actions == []
    assert [p.seat for p in game.players] == list(range(players))
    assert [p.name for p in game.players] == names
    scores = [p.score for p in game.players]
    assert sum(scores) > 0, "a whole game scores something"
    assert sum(t.count for t in game.bag) == 0, "the bag is empty at the end"

    # The seed is revealed and is the one committed to at creation.
    assert game.seed == seed.hex()
    assert hashlib.sha256(bytes.fromhex(game.seed)).hexdigest() == game.seed_sha256
    assert game.seed_sha256 == start.seed_sha256

    # The winners are exactly the seats with the highest score.
    best = max(scores)
    assert sorted(game.winners) == [p.seat for p in game.players if p.score == best]

    # The rules asked for are the rules played.
    expected = {pb.EXPANSION_RIVER} if river else set()
    expected |= {pb.EXPANSION_COUNT} if count else set()
    assert set(game.rules.expansions) == expected
    # River tiles are "RS", "RL", "R1".."R8"; the City's "CO1".."CO12".
    kinds = [t.kind for t in game.tiles]
    assert any(re.fullmatch(r"R[SL1-8]", k) for k in kinds) == river
    assert any(re.fullmatch(r"CO\d+", k) for k in kinds) == count
    assert game.HasField("city") == count

    # What Act answered adds up to the final game.
    assert len(responses) == steps
    versions = [r.version for r in responses]
    assert versions == sorted(set(versions)), "versions strictly increase"
    assert all(r.version == r.game.version for r in responses)
    assert responses[-1].version == game.version
    assert responses[-1].events[-1].finished
    assert not any(e.finished for r in responses[:-1] for e in r.events)
    points: Counter[int] = Counter()
    for response in responses:
        for event in response.events:
            for change in event.score_changes:
                for seat in change.seats:
                    points[seat] += change.points
    assert [points[seat] for seat in range(players)] == scores

    # A finished game takes no more actions.
    with pytest.raises(GameError) as refused:
        # "pass" is a Python keyword, hence the dict.
        give_up = pb.Action(**{"pass": pb.Pass()})  # type: ignore[arg-type]
        client.act(game.name, created.tokens[0], game.version, give_up)
    assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.reason == "GAME_FINISHED"


def test_a_basic_answer_carries_all_but_the_board(client: GameClient) -> None:
    created = client.create_game(["Ada", "Bob"])
    legal = client.legal_actions(created.name)
    response = client.act(
        created.name, created.tokens[legal.pending.seat], legal.version, legal.actions[0], basic=True
    )
    full = client.get_game(created.name)
    assert len(full.tiles) > 0 and len(response.game.tiles) == 0
    assert len(response.game.bag) == 0 and len(full.bag) > 0
    assert response.game.pending == full.pending
    assert list(response.game.players) == list(full.players)
    assert response.version == full.version
    assert len(response.legal_actions) > 0


def test_a_seat_reads_a_delayed_game_now_and_a_spectator_behind(client: GameClient) -> None:
    created = client.create_game(["Ada", "Bob"], spectator_delay=3)
    for _ in range(6):
        legal = client.legal_actions(created.name, created.tokens[0])
        token = created.tokens[legal.pending.seat]
        client.act(created.name, token, legal.version, legal.actions[0])
    mine = client.legal_actions(created.name, created.tokens[0])
    spectator = client.legal_actions(created.name)
    assert spectator.version == mine.version - 3
    assert client.get_game(created.name, created.tokens[1]).version == mine.version
    assert client.get_game(created.name).version == mine.version - 3
