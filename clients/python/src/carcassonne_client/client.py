"""A thin, typed wrapper over the generated GameService stub.

It adds what every program would otherwise repeat: the seat token in the
metadata (of Act, and of every read given one: a seat's program reads its
game with its token, or a game with a spectator delay shows it an earlier
version), fresh request ids, a deadline on each call, and one exception type
(GameError) with the server's ErrorInfo reason. Requests and answers stay the
generated messages (see pb.py), so nothing of the API is hidden.

Clocks: `time_control` builds a game's time control for `create_game`;
`resign` and `abort` end a game early; clocks.py reads a seat's time left.

Registered players and tournaments (PlayerService, TournamentService):
`register_player` (the API key is shown once), `get_player`,
`set_organiser` (with the server's admin key), `leaderboard`,
`rating_history`, `watch_player` (the player's one stream, resumed by
position: player_stream.py), and `create_tournament` (with an organiser's
key), `get_tournament`, `list_tournaments`, `standings`,
`watch_tournament`, `withdraw_player`, `export_tournament_archive`. A
registered player's key is its token in every game where a seat is its
own; registered.py plays all of a player's decisions from its stream.

Consent (ChallengeService): no game seats a registered player who did not
agree. `create_game` seats at most its caller (with `key`); registered
players meet in a game through a challenge: `create_challenge` (with the
challenger's key: named players' seats, open seats, bots' seats),
`get_challenge`, `list_challenges`, `accept_challenge`,
`decline_challenge`, `cancel_challenge`. Rated games come from challenges
and tournaments only.
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
from carcassonne_client.player_stream import PlayerStream, ResumeInfo

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
    # tokens[seat] acts for that seat; "" for a registered player's seat,
    # for which the player's API key is the token.
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
    """The metadata that makes a call a seat's (or a player's, the admin's):
    none for a spectator."""
    return (("authorization", f"Bearer {token}"),) if token else ()


def _named(collection: str, name: str) -> str:
    """The full name, "players/Ada", from "Ada" or "players/Ada" (and so
    for tournaments and challenges)."""
    prefix = f"{collection}/"
    return name if name.startswith(prefix) else prefix + name


def _challenge_seat(seat: str | pb.ChallengeSeat) -> pb.ChallengeSeat:
    """A challenge's seat: a player's name is that player's seat."""
    if isinstance(seat, str):
        return pb.ChallengeSeat(player=_named("players", seat))
    return seat


@dataclass(frozen=True)
class Registration:
    """A player just registered, and its API key: shown only this once (the
    server keeps its hash). The key is the player's token in every game
    where a seat is its own, and opens its stream (`watch_player`)."""

    player: pb.RegisteredPlayer
    api_key: str

    @property
    def name(self) -> str:
        """The player's name, "players/{name}"."""
        return self.player.name


PoolName = Literal["duel", "multiplayer"]

_POOLS: dict[str, pb.RatingPool] = {
    "duel": pb.RATING_POOL_DUEL,
    "multiplayer": pb.RATING_POOL_MULTIPLAYER,
}

FormatName = Literal["swiss", "round_robin"]

_FORMATS: dict[str, pb.TournamentFormat] = {
    "swiss": pb.TOURNAMENT_FORMAT_SWISS,
    "round_robin": pb.TOURNAMENT_FORMAT_ROUND_ROBIN,
}


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
        self.players: Any = pb.PlayerServiceStub(channel)  # type: ignore[no-untyped-call]
        self.tournaments: Any = pb.TournamentServiceStub(channel)  # type: ignore[no-untyped-call]
        self.challenges: Any = pb.ChallengeServiceStub(channel)  # type: ignore[no-untyped-call]
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
        accounts: Sequence[str] = (),
        key: str | None = None,
        rated: bool = False,
    ) -> CreatedGame:
        """Creates a game for 2 to 5 players (names in seat order).

        `seed` (32 bytes, sent as 64 hex digits like every seed of the API)
        fixes the draw order; the server picks one when it is None.
        `request_id` also names the game: the same call retried with the same
        id (16 characters or more) returns the first answer, tokens
        included, from any server node at any time (a shorter id: GameError
        ALREADY_EXISTS / GAME_ALREADY_CREATED); other fields with the same id raise ALREADY_EXISTS /
        REQUEST_ID_REUSED. It never creates a second game.
        `time_control` (see `time_control()`) gives the game clocks; None:
        no clock runs.
        `accounts` seats the caller only: empty, or one entry per seat,
        "" for a guest seat (with a token of its own) and, for at most one
        seat, the caller's own "players/{name}" (or the bare name), whose
        API `key` the call sends (it is then that seat's token: no token is
        made for it, `tokens[seat]` is ""). Naming any other registered
        player, or a player without their key, is GameError
        PERMISSION_DENIED / CONSENT_REQUIRED: other registered players
        agree to a game through a challenge (`create_challenge`).
        `rated=True` is always refused the same way: a game is rated only
        through a challenge or a tournament.
        """
        request = pb.CreateGameRequest(
            request_id=request_id or new_request_id(),
            players=list(players),
            rules=rules,
            seed=seed.hex() if seed else "",
            spectator_delay=spectator_delay,
            time_control=time_control,
            accounts=[_named("players", a) if a else "" for a in accounts],
            rated=rated,
        )
        response: pb.CreateGameResponse = self._call(self.stub.CreateGame, request, _auth(key))
        by_seat = {t.seat: t.token for t in response.tokens}
        tokens = [by_seat.get(seat, "") for seat in range(len(response.game.players))]
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

    # Registered players (PlayerService).

    def register_player(self, name: str, *, admin_key: str | None = None) -> Registration:
        """Registers `name` (1 to 32 characters of A-Z a-z 0-9 _ -, unique
        regardless of case; else ALREADY_EXISTS / NAME_TAKEN) and returns
        the player with its API key, shown only this once. A server started
        with `--registration admin` registers only with its `admin_key`
        (else PERMISSION_DENIED / REGISTRATION_CLOSED).
        """
        response: pb.RegisterPlayerResponse = self._call(
            self.players.RegisterPlayer, pb.RegisterPlayerRequest(name=name), _auth(admin_key)
        )
        return Registration(player=response.player, api_key=response.api_key)

    def get_player(self, name: str) -> pb.RegisteredPlayer:
        """The player "players/{name}" (or the bare name): whether an
        organiser, and its ratings (NOT_FOUND / PLAYER_NOT_FOUND)."""
        request = pb.GetPlayerRequest(name=_named("players", name))
        response: pb.GetPlayerResponse = self._call(self.players.GetPlayer, request)
        return response.player

    def set_organiser(
        self, name: str, admin_key: str, organiser: bool = True
    ) -> pb.RegisteredPlayer:
        """Makes the player an organiser (or not): only with the server's
        admin key (else PERMISSION_DENIED / NOT_ADMIN)."""
        request = pb.SetOrganiserRequest(name=_named("players", name), organiser=organiser)
        response: pb.SetOrganiserResponse = self._call(
            self.players.SetOrganiser, request, _auth(admin_key)
        )
        return response.player

    def leaderboard(self, pool: PoolName = "duel", *, limit: int = 0) -> list[pb.LeaderboardEntry]:
        """The players of a rating pool ("duel": Glicko-2, 2 players;
        "multiplayer": Weng-Lin, 3 to 5), best first; at most `limit` (1 to
        1000; 100 when 0)."""
        rating_pool = _POOLS.get(pool)
        if rating_pool is None:
            raise ValueError(f"pool: 'duel' or 'multiplayer', not {pool!r}")
        request = pb.GetLeaderboardRequest(pool=rating_pool, limit=limit)
        response: pb.GetLeaderboardResponse = self._call(self.players.GetLeaderboard, request)
        return list(response.entries)

    def rating_history(self, name: str) -> list[pb.RatingChange]:
        """Every rating change of the player, oldest first: one per rated
        game, with its pool and the rating before and after."""
        request = pb.GetRatingHistoryRequest(name=_named("players", name))
        response: pb.GetRatingHistoryResponse = self._call(self.players.GetRatingHistory, request)
        return list(response.changes)

    def watch_player(
        self,
        key: str,
        *,
        after_position: int = 0,
        keep_alive_ms: int = 0,
        max_reopenings: int = 10,
        on_resume: Callable[[ResumeInfo], None] | None = None,
    ) -> PlayerStream:
        """The player's own stream (WatchPlayer, with its API `key`): the
        games that start with the player in a seat, every decision that
        becomes the player's (with its legal actions and clocks), the games
        that end, the tournament rounds that seat the player, the
        challenges the player made or is named in (as they stand after
        each change), and keep-alives. It reopens by itself after a dropped connection, from
        the last position seen, so that no message is lost or repeated
        (see player_stream.py); `after_position` resumes an earlier
        stream's `position`. Iterate it; `close()` ends it.
        """
        return PlayerStream(
            self.players,
            key,
            after_position=after_position,
            keep_alive_ms=keep_alive_ms,
            max_reopenings=max_reopenings,
            on_resume=on_resume,
        )

    # Tournaments (TournamentService).

    def create_tournament(
        self,
        organiser_key: str,
        participants: Sequence[str],
        *,
        time_control: pb.TimeControl,
        title: str = "Tournament",
        format: FormatName = "swiss",
        rounds: int = 0,
        table_size: int = 0,
        table_points: Sequence[int] = (),
        games_per_match: int = 0,
        duplicate_bags: bool = False,
        rated: bool = False,
        rules: pb.RuleOptions | None = None,
        request_id: str | None = None,
        house_bots: Sequence[str] = (),
    ) -> pb.Tournament:
        """Creates and starts a tournament of registered players (2 to 256,
        "players/{name}" or bare names), with an organiser's key (else
        PERMISSION_DENIED / NOT_ORGANISER). The server pairs each round,
        creates its games and tells the players through their streams.

        `format`: "swiss" (`rounds` rounds) or "round_robin". `table_size`
        2 to 5 (2 when 0), `table_points` by place (defaults by table size),
        `games_per_match` 1 to 10 (1 when 0). `time_control` is required:
        every game of a tournament has a clock. `request_id` (16 to 128
        characters; a fresh one by default) names the tournament, so a
        retry never creates a second one. `house_bots`: built-in bots taking
        part beside them, a level each ("random", "greedy", "search",
        "search:N"; else INVALID_ARGUMENT / UNKNOWN_BOT_LEVEL), named
        "greedy bot 1" and so on, played by the server and never rated.
        Returns the tournament with its first round paired.
        """
        tournament_format = _FORMATS.get(format)
        if tournament_format is None:
            raise ValueError(f"format: 'swiss' or 'round_robin', not {format!r}")
        request = pb.CreateTournamentRequest(
            request_id=request_id or new_request_id(),
            title=title,
            participants=[_named("players", p) for p in participants],
            format=tournament_format,
            rounds=rounds,
            table_size=table_size,
            table_points=list(table_points),
            games_per_match=games_per_match,
            duplicate_bags=duplicate_bags,
            rated=rated,
            rules=rules,
            time_control=time_control,
            house_bots=list(house_bots),
        )
        response: pb.CreateTournamentResponse = self._call(
            self.tournaments.CreateTournament, request, _auth(organiser_key)
        )
        return response.tournament

    def get_tournament(self, name: str) -> pb.Tournament:
        """The tournament "tournaments/{id}": its settings, the rounds
        paired so far with their games and results (NOT_FOUND /
        TOURNAMENT_NOT_FOUND)."""
        request = pb.GetTournamentRequest(name=_named("tournaments", name))
        response: pb.GetTournamentResponse = self._call(self.tournaments.GetTournament, request)
        return response.tournament

    def list_tournaments(
        self, *, page_size: int = 0, page_token: str = ""
    ) -> pb.ListTournamentsResponse:
        """One page of tournaments in the order of their names (`page_size`
        1 to 100, 20 when 0); pass `next_page_token` on for the next page,
        until it is empty."""
        request = pb.ListTournamentsRequest(page_size=page_size, page_token=page_token)
        response: pb.ListTournamentsResponse = self._call(self.tournaments.ListTournaments, request)
        return response

    def all_tournaments(self, *, page_size: int = 0) -> Iterator[pb.Tournament]:
        """Every tournament, page after page."""
        token = ""
        while True:
            page = self.list_tournaments(page_size=page_size, page_token=token)
            yield from page.tournaments
            token = page.next_page_token
            if not token:
                return

    def standings(self, name: str) -> pb.Standings:
        """The tournament's standings now (`final` once it is over)."""
        request = pb.GetStandingsRequest(name=_named("tournaments", name))
        response: pb.GetStandingsResponse = self._call(self.tournaments.GetStandings, request)
        return response.standings

    def watch_tournament(
        self, name: str, *, timeout: float | None = None
    ) -> Iterator[pb.WatchTournamentResponse]:
        """The tournament and its standings now, then again after every
        change (a round paired, a game ended, a withdrawal, the end); the
        stream ends after the tournament finishes, so the last message has
        the final standings. `timeout` bounds the whole stream (None: no
        deadline). Each message is the whole state: after a failure
        (GameError), call again.
        """
        request = pb.WatchTournamentRequest(name=_named("tournaments", name))
        call = self.tournaments.WatchTournament(request, timeout=timeout)
        try:
            yield from call
        except grpc.RpcError as error:
            raise GameError.from_rpc_error(error) from error
        finally:
            call.cancel()

    def withdraw_player(self, name: str, player: str, organiser_key: str) -> pb.Tournament:
        """Withdraws `player` from the tournament: never paired again, and
        the seats of its running games resign. Only the tournament's
        organiser may (else PERMISSION_DENIED / NOT_ORGANISER); withdrawing
        twice, or from a finished tournament, is FAILED_PRECONDITION /
        TOURNAMENT_STATE."""
        request = pb.WithdrawPlayerRequest(
            name=_named("tournaments", name), player=_named("players", player)
        )
        response: pb.WithdrawPlayerResponse = self._call(
            self.tournaments.WithdrawPlayer, request, _auth(organiser_key)
        )
        return response.tournament

    def export_tournament_archive(self, name: str, *, timeout: float | None = None) -> bytes:
        """A finished tournament's signed archive (a tar file, see
        docs/archive-format.md): every game's files, the tournament's event
        log, its standings and the ratings it led to, signed by the server's
        key. The chunks of the stream, joined. A running tournament is
        FAILED_PRECONDITION / TOURNAMENT_STATE."""
        request = pb.ExportTournamentArchiveRequest(name=_named("tournaments", name))
        call = self.tournaments.ExportTournamentArchive(
            request, timeout=self.timeout if timeout is None else timeout
        )
        try:
            return b"".join(chunk.chunk for chunk in call)
        except grpc.RpcError as error:
            raise GameError.from_rpc_error(error) from error
        finally:
            call.cancel()

    # Challenges (ChallengeService): how registered players agree to a game.

    def create_challenge(
        self,
        key: str,
        seats: Sequence[str | pb.ChallengeSeat],
        *,
        rules: pb.RuleOptions | None = None,
        time_control: pb.TimeControl | None = None,
        spectator_delay: int = 0,
        rated: bool = False,
        expire_ms: int = 0,
        request_id: str | None = None,
    ) -> pb.Challenge:
        """Offers a game, as the player whose API `key` is sent (the
        challenger). `seats`, 2 to 5 in seat order: a registered player's
        name ("players/{name}" or bare) for a seat that player accepts
        (the challenger's own among them, taken from the start),
        `pb.ChallengeSeat(open=True)` for a seat any registered player may
        take (a seek), `pb.ChallengeSeat(bot="greedy")` for a built-in
        bot's. `rated` only without bot seats. The offer lapses after
        `expire_ms` (10 s to 7 days; an hour when 0). `request_id` (16 to
        128 characters; a fresh one by default) names the challenge, so a
        retry never makes a second one.

        Returns the challenge, OPEN until every seat is taken (ACCEPTED at
        once, its `game` started, when the challenger and bots are all the
        seats). The players named are told through their streams
        (`watch_player`: a `challenge` message). Refusals: PLAYER_NOT_FOUND,
        INVALID_ARGUMENT, TOO_MANY_CHALLENGES (16 open per challenger).
        """
        request = pb.CreateChallengeRequest(
            request_id=request_id or new_request_id(),
            seats=[_challenge_seat(seat) for seat in seats],
            rules=rules,
            time_control=time_control,
            spectator_delay=spectator_delay,
            rated=rated,
            expire_ms=expire_ms,
        )
        response: pb.CreateChallengeResponse = self._call(
            self.challenges.CreateChallenge, request, _auth(key)
        )
        return response.challenge

    def get_challenge(self, name: str) -> pb.Challenge:
        """The challenge "challenges/{id}" (or the bare id) as it stands:
        its seats and which are taken, its status, and `game` once it
        started (NOT_FOUND / CHALLENGE_NOT_FOUND)."""
        request = pb.GetChallengeRequest(name=_named("challenges", name))
        response: pb.GetChallengeResponse = self._call(self.challenges.GetChallenge, request)
        return response.challenge

    def list_challenges(self, key: str | None = None) -> list[pb.Challenge]:
        """The open challenges, oldest first: with a player's `key`, those
        the player made or is named in, and every open seek; without one,
        the open seeks."""
        response: pb.ListChallengesResponse = self._call(
            self.challenges.ListChallenges, pb.ListChallengesRequest(), _auth(key)
        )
        return list(response.challenges)

    def accept_challenge(self, name: str, key: str, *, seat: int | None = None) -> pb.Challenge:
        """Takes a seat of the challenge, as the player whose API `key` is
        sent: the player's own named seat, or else an open one (`seat`
        picks which; the first when None). The acceptance that takes the
        last seat starts the game: the answer is ACCEPTED and names it in
        `game`. Refusals: NOT_INVITED (no seat for the caller),
        ALREADY_SEATED (the caller holds a seat of it already, as the
        challenger does), SEAT_NOT_OPEN, CHALLENGE_CLOSED,
        CHALLENGE_EXPIRED."""
        request = pb.AcceptChallengeRequest(name=_named("challenges", name))
        if seat is not None:
            request.seat = seat
        response: pb.AcceptChallengeResponse = self._call(
            self.challenges.AcceptChallenge, request, _auth(key)
        )
        return response.challenge

    def decline_challenge(self, name: str, key: str) -> pb.Challenge:
        """Turns the game down, as a player named or seated in it (its API
        `key`): the challenge is DECLINED and never starts. The challenger
        cancels instead (CHALLENGER_DECLINES); anyone else is
        NOT_INVITED."""
        request = pb.DeclineChallengeRequest(name=_named("challenges", name))
        response: pb.DeclineChallengeResponse = self._call(
            self.challenges.DeclineChallenge, request, _auth(key)
        )
        return response.challenge

    def cancel_challenge(self, name: str, key: str) -> pb.Challenge:
        """Withdraws the offer, with the challenger's API `key` (anyone
        else: NOT_CHALLENGER), while it is open (else CHALLENGE_CLOSED or
        CHALLENGE_EXPIRED)."""
        request = pb.CancelChallengeRequest(name=_named("challenges", name))
        response: pb.CancelChallengeResponse = self._call(
            self.challenges.CancelChallenge, request, _auth(key)
        )
        return response.challenge

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
