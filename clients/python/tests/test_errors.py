"""Rejected calls surface as GameError with the gRPC code and the ErrorInfo
reason, and change nothing."""

from __future__ import annotations

import grpc
import pytest

from carcassonne_client import CreatedGame, GameClient, GameError, pb
from carcassonne_client.client import new_request_id


@pytest.fixture
def created(client: GameClient) -> CreatedGame:
    return client.create_game(["Ada", "Bob"])


def rejection(call: object) -> GameError:
    assert callable(call)
    with pytest.raises(GameError) as raised:
        call()
    return raised.value


def test_a_wrong_token_is_permission_denied(client: GameClient, created: CreatedGame) -> None:
    legal = client.legal_actions(created.name)
    error = rejection(
        lambda: client.act(created.name, "not-a-token", legal.version, legal.actions[0])
    )
    assert error.code == grpc.StatusCode.PERMISSION_DENIED
    assert error.reason == "BAD_TOKEN"
    assert error.domain == "carcassonne.v1"
    assert "BAD_TOKEN" in str(error)


def test_another_seats_token_is_not_your_turn(client: GameClient, created: CreatedGame) -> None:
    legal = client.legal_actions(created.name)
    other = created.tokens[1 - legal.pending.seat]
    error = rejection(lambda: client.act(created.name, other, legal.version, legal.actions[0]))
    assert error.code == grpc.StatusCode.PERMISSION_DENIED
    assert error.reason == "NOT_YOUR_TURN"


def test_an_empty_token_is_unauthenticated(client: GameClient, created: CreatedGame) -> None:
    legal = client.legal_actions(created.name)
    error = rejection(lambda: client.act(created.name, "", legal.version, legal.actions[0]))
    assert error.code == grpc.StatusCode.UNAUTHENTICATED
    assert error.reason == "MISSING_TOKEN"


def test_a_stale_version_is_aborted(client: GameClient, created: CreatedGame) -> None:
    first = client.legal_actions(created.name)
    token = created.tokens[first.pending.seat]
    client.act(created.name, token, first.version, first.actions[0])
    now = client.legal_actions(created.name)
    assert now.version > first.version
    # Acting on what the game was before.
    stale = rejection(
        lambda: client.act(
            created.name, created.tokens[now.pending.seat], first.version, now.actions[0]
        )
    )
    assert stale.code == grpc.StatusCode.ABORTED
    assert stale.reason == "STALE_VERSION"
    assert stale.metadata["version"] == str(now.version)


def test_illegal_actions_are_failed_preconditions(client: GameClient, created: CreatedGame) -> None:
    legal = client.legal_actions(created.name)
    assert legal.pending.kind == pb.DECISION_KIND_PLACE_TILE
    token = created.tokens[legal.pending.seat]
    far_away = pb.Action(place_tile=pb.PlaceTile(position=pb.Position(x=50, y=50), rotation=0))
    assert far_away not in legal.actions
    error = rejection(lambda: client.act(created.name, token, legal.version, far_away))
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION
    assert error.reason == "RULE_VIOLATION"
    assert error.metadata.get("rule"), "a rule violation names its rule"

    follower = pb.Action(place_follower=pb.PlaceFollower())
    error = rejection(lambda: client.act(created.name, token, legal.version, follower))
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION
    assert error.reason == "WRONG_DECISION"


def test_rejected_calls_change_nothing(client: GameClient, created: CreatedGame) -> None:
    before = client.get_game(created.name)
    legal = client.legal_actions(created.name)
    for token in ["wrong", created.tokens[1 - legal.pending.seat]]:
        rejection(lambda t=token: client.act(created.name, t, legal.version, legal.actions[0]))
    assert client.get_game(created.name) == before


def test_a_retried_act_is_answered_once(client: GameClient, created: CreatedGame) -> None:
    legal = client.legal_actions(created.name)
    token = created.tokens[legal.pending.seat]
    request_id = new_request_id()
    first = client.act(created.name, token, legal.version, legal.actions[0], request_id=request_id)
    again = client.act(created.name, token, legal.version, legal.actions[0], request_id=request_id)
    assert again.version == first.version
    assert client.get_game(created.name).version == first.version


def test_a_retried_create_returns_the_first_answer(client: GameClient) -> None:
    request_id = new_request_id()
    created = client.create_game(["Ada", "Bob"], request_id=request_id)
    again = client.create_game(["Ada", "Bob"], request_id=request_id)
    assert again.name == created.name
    assert again.tokens == created.tokens, "the tokens of the first answer"
    # The same id with other fields is not a retry.
    error = rejection(lambda: client.create_game(["Ada", "Eve"], request_id=request_id))
    assert error.code == grpc.StatusCode.ALREADY_EXISTS
    assert error.reason == "REQUEST_ID_REUSED"


def test_bad_arguments_and_unknown_games(client: GameClient) -> None:
    error = rejection(lambda: client.create_game(["Solo"]))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.reason == "INVALID_ARGUMENT"
    assert error.metadata["field"] == "players"

    error = rejection(lambda: client.get_game("games/no-such-game"))
    assert error.code == grpc.StatusCode.NOT_FOUND
    assert error.reason == "GAME_NOT_FOUND"


class _BareError(grpc.RpcError, grpc.Call):  # type: ignore[misc]
    """A failed call without status details, as a proxy might answer."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "upstream connect error"

    def trailing_metadata(self) -> tuple[tuple[str, bytes], ...]:
        return (("grpc-status-details-bin", b"\xff not a status"),)

    def initial_metadata(self) -> tuple[()]:
        return ()

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> None:
        return None

    def cancel(self) -> bool:
        return False

    def add_callback(self, callback: object) -> bool:
        return False


def test_errors_without_details_keep_code_and_message() -> None:
    error = GameError.from_rpc_error(_BareError())
    assert error.code == grpc.StatusCode.UNAVAILABLE
    assert error.reason is None
    assert error.message == "upstream connect error"
    assert str(error) == "UNAVAILABLE: upstream connect error"
