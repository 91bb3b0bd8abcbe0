"""A registered player's bot: every decision of the player, in every game,
over the player's one stream.

    from carcassonne_client import GameClient
    from carcassonne_client.registered import RegisteredBot, random_policy

    with GameClient.connect("127.0.0.1:50051") as client:
        bot = RegisteredBot(client, api_key, random_policy(random.Random(7)))
        record = bot.run()            # until bot.stop(), from any thread

The player's stream (WatchPlayer, see player_stream.py) brings each
decision that becomes the player's with its legal actions: the bot asks its
policy for one of them and sends it with Act, at that version, with the
player's key. It acts once per (game, version). An answer that says the game
has moved on (STALE_VERSION: another action came first; OUT_OF_TIME: the
seat's clock ran out and the server stored the timeout; GAME_FINISHED) is
no failure: the stream brings whatever comes next. The stream reopens by
itself after a dropped connection, from the last position seen, so no
decision is lost; a call that fails with UNAVAILABLE is retried with the
same request id, so an action is never stored twice.

Challenges: a game with other registered players needs the player's
consent. By default the bot leaves the challenges its stream tells of to a
person (AcceptChallenge or DeclineChallenge with the key). With
`accept_challenges=True` it accepts the player's named seat of each open
challenge it hears of (the stream's snapshot included), once per
challenge, and then plays the game when it starts like any other. An
answer that says the challenge moved on (CHALLENGE_CLOSED,
CHALLENGE_EXPIRED, ALREADY_SEATED: the player holds its seat already, as
the challenger always does) is no failure.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from carcassonne_client import pb
from carcassonne_client.client import GameClient, LegalActions, new_request_id
from carcassonne_client.errors import GameError
from carcassonne_client.player_stream import PlayerStream, ResumeInfo

# The answers that mean "the game moved on without this action": not a
# failure of the bot.
MOVED_ON = frozenset({"STALE_VERSION", "OUT_OF_TIME", "GAME_FINISHED"})

# The answers to AcceptChallenge that mean "the challenge moved on without
# this acceptance" (or needed none): not a failure of the bot.
CHALLENGE_MOVED_ON = frozenset({"CHALLENGE_CLOSED", "CHALLENGE_EXPIRED", "ALREADY_SEATED"})

# Codes after which an Act is sent again, the same request with the same
# request id (the server answers a retry with its first answer).
RETRIED = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


@dataclass(frozen=True)
class Decision:
    """A decision of the player: answer it with one of `legal.actions`."""

    # "games/{id}".
    game: str
    # The player's seat in it.
    seat: int
    # The version, the decision, the legal actions (and `pending.deadline_ms`).
    legal: LegalActions
    # The stream's message, with the seats' clocks (`legal.time_left_ms`).
    message: pb.PlayerDecision


# Chooses one of `decision.legal.actions`.
Policy = Callable[[Decision], pb.Action]


def random_policy(rng: random.Random | None = None) -> Policy:
    """A policy that picks a legal action at random (seeded by `rng`)."""
    chooser = rng or random.Random()

    def choose(decision: Decision) -> pb.Action:
        return chooser.choice(decision.legal.actions)

    return choose


@dataclass
class BotRecord:
    """What a bot did and heard, as it goes (read it from any thread)."""

    # Actions the server stored.
    actions: int = 0
    # Decisions answered, each (game, version) once.
    decisions: set[tuple[str, int]] = field(default_factory=set)
    # Answers that said the game had moved on, by reason.
    moved_on: dict[str, int] = field(default_factory=dict)
    # Games the stream said started, in order.
    started: list[str] = field(default_factory=list)
    # Games the stream said ended: the final game, by name.
    ended: dict[str, pb.Game] = field(default_factory=dict)
    # Tournament rounds that seated the player (or gave it a bye).
    rounds: list[pb.PlayerRoundPaired] = field(default_factory=list)
    # Challenges whose seat the bot accepted, in order (`accept_challenges`).
    accepted: list[str] = field(default_factory=list)
    # Challenges the bot sent AcceptChallenge for, each once.
    challenges: set[str] = field(default_factory=set)


class RegisteredBot:
    """Plays every decision of the player whose API key is `key` with
    `policy`, in every game, across any number of games, until `stop()` (or
    `run`'s own limits). One stream, reopened as needed.

    `accept_challenges`: accept the player's named seat of every open
    challenge the stream tells of (by default challenges are left to a
    person). `on_message` sees every message of the stream before the bot
    acts on it; `on_resume` each reopening of the stream. `basic` asks Act
    for answers without the board. An Act that fails with UNAVAILABLE (or
    past its deadline) is sent again, up to `act_attempts` tries in all;
    the stream gives up after `max_reopenings` reopenings in a row that
    bring nothing (pauses doubling from 50 ms to 2 s: about 9 s for 10).
    """

    def __init__(
        self,
        client: GameClient,
        key: str,
        policy: Policy,
        *,
        after_position: int = 0,
        keep_alive_ms: int = 0,
        basic: bool = True,
        accept_challenges: bool = False,
        act_attempts: int = 10,
        max_reopenings: int = 10,
        on_message: Callable[[pb.WatchPlayerResponse], None] | None = None,
        on_resume: Callable[[ResumeInfo], None] | None = None,
    ) -> None:
        self.client = client
        self.key = key
        self.policy = policy
        self.basic = basic
        self.accept_challenges = accept_challenges
        self.act_attempts = act_attempts
        self.on_message = on_message
        self.record = BotRecord()
        self.stream: PlayerStream = client.watch_player(
            key,
            after_position=after_position,
            keep_alive_ms=keep_alive_ms,
            max_reopenings=max_reopenings,
            on_resume=on_resume,
        )
        # Set once the stream is open: what happens after it reaches the bot.
        self.listening = threading.Event()

    def run(
        self,
        *,
        games: int | None = None,
        until: Callable[[], bool] | None = None,
    ) -> BotRecord:
        """Plays until `stop()`, or once `games` of the player's games have
        ended (as the stream tells), or once `until()` is true (checked
        after each message; a keep-alive comes at least every
        `keep_alive_ms`). Returns the record. Raises GameError when the
        stream is refused (UNKNOWN_KEY), when an Act fails for another
        reason than the game moving on (e.g. the policy chose an illegal
        action: RULE_VIOLATION), when an AcceptChallenge fails for another
        reason than the challenge moving on, or when the server stays
        away."""
        self.stream.open()
        self.listening.set()
        try:
            for message in self.stream:
                if self.on_message is not None:
                    self.on_message(message)
                self._handle(message)
                if games is not None and len(self.record.ended) >= games:
                    break
                if until is not None and until():
                    break
        finally:
            self.stream.close()
        return self.record

    def stop(self) -> None:
        """Ends `run` (from any thread): the stream closes."""
        self.stream.close()

    @property
    def position(self) -> int:
        """The stream's last position: a later bot resumes from it
        (`after_position`)."""
        return self.stream.position

    def _handle(self, message: pb.WatchPlayerResponse) -> None:
        kind = message.WhichOneof("message")
        if kind == "decision":
            self._decide(message.decision)
        elif kind == "game_started":
            self.record.started.append(message.game_started.game.name)
        elif kind == "game_ended":
            game = message.game_ended.game
            self.record.ended[game.name] = game
        elif kind == "round_paired":
            self.record.rounds.append(message.round_paired)
        elif kind == "challenge" and self.accept_challenges:
            self._accept(message.challenge)

    def _accept(self, challenge: pb.Challenge) -> None:
        """Takes the player's named seat of an open challenge, once per
        challenge. The bot does not know its player's name: the stream
        tells only of challenges the player made, is named in or took a
        seat of, so while a named seat waits, AcceptChallenge either takes
        the player's own or says ALREADY_SEATED. It never takes an open
        seat: a seek is a person's choice."""
        if challenge.status != pb.CHALLENGE_STATUS_OPEN or challenge.name in self.record.challenges:
            return
        if not any(seat.player and not seat.open and not seat.accepted for seat in challenge.seats):
            return
        self.record.challenges.add(challenge.name)
        for attempt in range(1, self.act_attempts + 1):
            try:
                self.client.accept_challenge(challenge.name, self.key)
            except GameError as error:
                if error.reason in CHALLENGE_MOVED_ON:
                    reason = error.reason or ""
                    self.record.moved_on[reason] = self.record.moved_on.get(reason, 0) + 1
                    return
                if error.code in RETRIED and attempt < self.act_attempts and not self.stream.closed:
                    # A retry of an acceptance that was stored says
                    # ALREADY_SEATED or CHALLENGE_CLOSED: moved on.
                    time.sleep(min(2.0, 0.05 * 2 ** (attempt - 1)))
                    continue
                raise
            self.record.accepted.append(challenge.name)
            return

    def _decide(self, message: pb.PlayerDecision) -> None:
        legal = message.legal
        done = (message.game, legal.version)
        if done in self.record.decisions or not legal.actions:
            return
        self.record.decisions.add(done)
        decision = Decision(
            game=message.game,
            seat=message.seat,
            legal=LegalActions(
                version=legal.version, pending=legal.pending, actions=list(legal.actions)
            ),
            message=message,
        )
        action = self.policy(decision)
        request_id = new_request_id()
        for attempt in range(1, self.act_attempts + 1):
            try:
                self.client.act(
                    message.game,
                    self.key,
                    legal.version,
                    action,
                    request_id=request_id,
                    basic=self.basic,
                )
            except GameError as error:
                if error.reason in MOVED_ON:
                    reason = error.reason or ""
                    self.record.moved_on[reason] = self.record.moved_on.get(reason, 0) + 1
                    return
                if error.code in RETRIED and attempt < self.act_attempts and not self.stream.closed:
                    time.sleep(min(2.0, 0.05 * 2 ** (attempt - 1)))
                    continue
                raise
            self.record.actions += 1
            return
