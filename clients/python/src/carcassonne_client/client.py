"""A thin, typed wrapper over the generated GameService stub.

It adds what every program would otherwise repeat: the seat token in the
metadata (of Act, and of every read given one: a seat's program reads its
game with its token, or a game with a spectator delay shows it an earlier
version), fresh request ids, a deadline on each call, and one exception type
(GameError) with the server's ErrorInfo reason. Requests and answers stay the
generated messages (see pb.py), so nothing of the API is hidden.

Clocks: `time_control` builds a game's time control for `create_game`;
`resign` and `abort` end a game early; clocks.py reads a seat's time left.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, TypeVar

import grpc

from carcassonne_client import pb
from carcassonne_client.errors import GameError

# Long enough for a call that waits on the store under load, short enough
# that a hung server fails a bot or a test instead of stalling it.
DEFAULT_TIMEOUT_S = 30.0

_Answer = TypeVar("_Answer")


def new_request_id() -> str:
    """A fresh id for CreateGame or Act (1 to 128 printable characters)."""
    return uuid.uuid4().hex


def rule_options(*, river: bool = False, count: bool = False) -> pb.RuleOptions:
    """Default rules with the given expansions."""
    expansions = []
    if river:
        expansions.append(pb.EXPANSION_RIVER)
    if count:
        expansions.append(pb.EXPANSION_COUNT)
    return pb.RuleOptions(expansions=expansions)


TimeoutRuleName = Literal["forfeit", "auto"]

_TIMEOUT_RULES: dict[str, pb.TimeoutRule] = {
    "forfeit": pb.TIMEOUT_RULE_FORFEIT,
    "auto": pb.TIMEOUT_RULE_AUTO,
}


def time_control(
    *,
    main_ms: int = 0,
    increment_ms: int = 0,
    decision_ms: int = 0,
    on_timeout: TimeoutRuleName = "forfeit",
) -> pb.TimeControl:
    """A time control for `create_game` (docs/rules.md, T-1): a chess clock
    of `main_ms` per seat plus `increment_ms` each time the seat hands the
    game over, a limit of `decision_ms` per decision, or both (0: none).
    `on_timeout`: "forfeit" (the seat goes out; with 2 players the other
    wins) or "auto" (the server decides for it and the game goes on).

    Durations are milliseconds, at most 30 days; the server checks them
    (INVALID_ARGUMENT, field "time_control...": e.g. neither a main time
    nor a limit, or an increment without a main time).

        time_control(main_ms=300_000, increment_ms=5_000)   # 5 min + 5 s
        time_control(decision_ms=86_400_000)                # a day a move
    """
    rule = _TIMEOUT_RULES.get(on_timeout)
    if rule is None:
        raise ValueError(f"on_timeout: 'forfeit' or 'auto', not {on_timeout!r}")
    return pb.TimeControl(
        main_ms=main_ms, increment_ms=increment_ms, decision_ms=decision_ms, on_timeout=rule
    )


@dataclass(frozen=True)
class CreatedGame:
    """A new game and its seat tokens, which the server shows only once."""

    game: pb.Game
    # tokens[seat] acts for that seat.
    tokens: list[str]

    @property
    def name(self) -> str:
        return self.game.name


@dataclass(frozen=True)
class LegalActions:
    """The pending decision of a game and every legal answer to it."""

    # The version the actions are legal at: send it as expected_version.
    version: int
    pending: pb.PendingDecision
    actions: list[pb.Action]

    @property
    def finished(self) -> bool:
        """True when no decision is pending: the game is over (a running
        game always has one)."""
        return self.pending.kind == pb.DECISION_KIND_UNSPECIFIED


def _auth(token: str | None) -> tuple[tuple[str, str], ...]:
    """The metadata that makes a call a seat's: none for a spectator."""
    return (("authorization", f"Bearer {token}"),) if token else ()


class GameClient:
    """A connection to a Carcassonne server. Use as a context manager, or
    call close()."""

    def __init__(self, channel: grpc.Channel, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.channel = channel
        # The raw stubs, for what this wrapper does not cover (ListGames,
        # ReplayGame, ...). Typed Any: grpc's generator writes no type hints
        # for them.
        self.stub: Any = pb.GameServiceStub(channel)  # type: ignore[no-untyped-call]
        self.watcher: Any = pb.WatchServiceStub(channel)  # type: ignore[no-untyped-call]
        self.timeout = timeout

    @classmethod
    def connect(
        cls,
        addr: str,
        *,
        ready_timeout: float = 10.0,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> GameClient:
        """Opens a plaintext channel to `addr` ("host:port") and waits until
        it is up, so that a wrong address fails here rather than on the first
        call."""
        channel = grpc.insecure_channel(addr)
        try:
            grpc.channel_ready_future(channel).result(timeout=ready_timeout)
        except grpc.FutureTimeoutError:
            channel.close()
            raise GameError(
                grpc.StatusCode.UNAVAILABLE,
                f"no server answers at {addr} within {ready_timeout} s",
            ) from None
        return cls(channel, timeout=timeout)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> GameClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def create_game(
        self,
        players: Sequence[str],
        *,
        rules: pb.RuleOptions | None = None,
        seed: bytes | None = None,
        request_id: str | None = None,
        spectator_delay: int = 0,
        time_control: pb.TimeControl | None = None,
    ) -> CreatedGame:
        """Creates a game for 2 to 5 players (names in seat order).

        `seed` (32 bytes, sent as 64 hex digits like every seed of the API)
        fixes the draw order; the server picks one when it is None.
        `request_id` also names the game: the same call retried with the same
        id returns the first answer, tokens included, for 10 minutes while the
        server runs (later: GameError ALREADY_EXISTS / GAME_ALREADY_CREATED);
        other fields with the same id raise ALREADY_EXISTS /
        REQUEST_ID_REUSED. It never creates a second game.
        `time_control` (see `time_control()`) gives the game clocks; None:
        no clock runs.
        """
        request = pb.CreateGameRequest(
            request_id=request_id or new_request_id(),
            players=list(players),
            rules=rules,
            seed=seed.hex() if seed else "",
            spectator_delay=spectator_delay,
            time_control=time_control,
        )
        response: pb.CreateGameResponse = self._call(self.stub.CreateGame, request)
        tokens = [t.token for t in sorted(response.tokens, key=lambda t: t.seat)]
        return CreatedGame(game=response.game, tokens=tokens)

    def get_game(self, name: str, token: str | None = None) -> pb.Game:
        """The state of the game "games/{id}": now with a seat's `token`,
        `spectator_delay` events behind without one."""
        response: pb.GetGameResponse = self._call(
            self.stub.GetGame, pb.GetGameRequest(name=name), _auth(token)
        )
        return response.game

    def legal_actions(self, name: str, token: str | None = None) -> LegalActions:
        """The pending decision, whose seat it is, and every legal action.

        A seat's program passes its `token`: without one, a game with a
        spectator delay is shown as it was that many events ago.
        """
        response: pb.GetLegalActionsResponse = self._call(
            self.stub.GetLegalActions, pb.GetLegalActionsRequest(name=name), _auth(token)
        )
        return LegalActions(
            version=response.version,
            pending=response.pending,
            actions=list(response.actions),
        )

    def act(
        self,
        name: str,
        token: str,
        expected_version: int,
        action: pb.Action,
        *,
        request_id: str | None = None,
        basic: bool = False,
    ) -> pb.ActResponse:
        """Plays `action` for the seat of `token`, if the game is still at
        `expected_version` (else GameError ABORTED / STALE_VERSION).

        Pass the same `request_id` to retry a call whose answer was lost: the
        server answers it with the first answer instead of acting twice.
        `basic=True` asks for the game without its board (tiles, followers,
        bag, city): a smaller answer for a bot that does not need it.
        """
        request = pb.ActRequest(
            name=name,
            expected_version=expected_version,
            request_id=request_id or new_request_id(),
            action=action,
            view=pb.GAME_VIEW_BASIC if basic else pb.GAME_VIEW_FULL,
        )
        response: pb.ActResponse = self._call(self.stub.Act, request, _auth(token))
        return response

    def resign(
        self,
        name: str,
        token: str,
        expected_version: int,
        *,
        request_id: str | None = None,
        basic: bool = False,
    ) -> pb.ActResponse:
        """The seat of `token` leaves the game (T-8), at any time, also
        while another seat decides: `act` with `Action.resign`, so the same
        request id and retry rules. `expected_version` is the game's version
        as the seat last read it (else ABORTED / STALE_VERSION). With one
        seat left, the game ends (ending RESIGNED) and that seat wins; with
        more, it goes on without this one.
        """
        resign = pb.Action(resign=pb.Resign())
        return self.act(name, token, expected_version, resign, request_id=request_id, basic=basic)

    def abort(
        self,
        name: str,
        token: str,
        expected_version: int,
        *,
        request_id: str | None = None,
        basic: bool = False,
    ) -> pb.ActResponse:
        """Ends the game with no result (T-9: ending ABORTED, no ranking, no
        winners): `act` with `Action.abort`, so the same request id and
        retry rules. Only while some seat still in the game has had no
        decision of its own; later, FAILED_PRECONDITION / RULE_VIOLATION
        with rule T-9.
        """
        abort = pb.Action(abort=pb.Abort())
        return self.act(name, token, expected_version, abort, request_id=request_id, basic=basic)

    def watch_game(
        self,
        name: str,
        token: str | None = None,
        *,
        from_version: int | None = None,
        keep_alive_ms: int = 0,
        timeout: float | None = None,
    ) -> Iterator[pb.WatchGameResponse]:
        """WatchGame as it comes: a snapshot (at `from_version`, or now),
        then every event (a pb.WatchedEvent, with the pending decision, the
        scores, each seat's `time_left_ms` and, at the end, the `ending`)
        and the keep-alives; the stream ends after the event that ends the
        game. It does not resume by itself: after a failure (GameError),
        call again with `from_version` = the last version seen.
        `timeout` bounds the whole stream (None: no deadline).
        """
        request = pb.WatchGameRequest(name=name, keep_alive_ms=keep_alive_ms)
        if from_version is not None:
            request.from_version = from_version
        call = self.watcher.WatchGame(request, timeout=timeout, metadata=_auth(token))
        try:
            yield from call
        except grpc.RpcError as error:
            raise GameError.from_rpc_error(error) from error
        finally:
            # A caller that stops reading (breaks out of its loop) ends the
            # stream; after its end, this does nothing.
            call.cancel()

    def _call(
        self,
        method: Callable[..., _Answer],
        request: object,
        metadata: tuple[tuple[str, str], ...] = (),
    ) -> _Answer:
        try:
            return method(request, timeout=self.timeout, metadata=metadata)
        except grpc.RpcError as error:
            raise GameError.from_rpc_error(error) from error
