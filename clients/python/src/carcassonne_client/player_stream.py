"""WatchPlayer that resumes: a registered player's one stream.

The server's stream (PlayerService.WatchPlayer, with the player's API key)
starts with a snapshot of every decision that is the player's now and of
every open challenge waiting for the player to accept their named seat
(`snapshot` set, each carrying the position the stream started at), then
follows the store: each message has the store's `position` it was sent at,
in order. Reopened with `after_position` = the last position received
(snapshot messages excepted: they do not advance it), the stream goes on
right after it, so no event is missed and none is sent twice; its new
snapshot repeats the decisions still pending and the challenges still
waiting. A stream also ends when the server stops (or dies): the player has
to reopen it.

PlayerStream does that for its caller: it reopens after a dropped
connection or a server that went away, from the last position seen, and
drops what it has already yielded: a decision is one (game, version), and
a challenge while open is as far along as its seats taken (the server may
send either twice, from a snapshot and from the events; an open
challenge's events after a snapshot may also tell of an earlier stage
than the snapshot did). So its caller sees every message once, in position
order, across any number of reconnections.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc

from carcassonne_client import pb
from carcassonne_client.errors import GameError

# Codes after which a reopened stream may succeed: the server or the
# connection went away, or the server ran short for a moment. A stream the
# server ends (it is stopping) is resumed too: WatchPlayer never ends by
# itself. UNAUTHENTICATED (UNKNOWN_KEY, MISSING_TOKEN), INVALID_ARGUMENT and
# the like are raised: reopening would not help.
RESUMABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)


@dataclass(frozen=True)
class ResumeInfo:
    """Told to `on_resume` before each reopening."""

    # The position the new stream starts after (0: "from now", nothing
    # having been seen yet).
    after_position: int
    # "reconnect" (asked for by `reconnect()`), "ended" (the server closed
    # the stream: it is stopping) or "failed" (the connection or the call
    # failed: `error`).
    why: str
    # Reopenings in a row without a message in between, from 1.
    attempt: int
    error: GameError | None = None


def _auth(key: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {key}"),)


class PlayerStream(Iterator[pb.WatchPlayerResponse]):
    """Iterates a player's WatchPlayer messages (pb.WatchPlayerResponse:
    `game_started`, `decision`, `game_ended`, `round_paired`, `challenge`,
    `keep_alive`), reopening the stream after a failure from the last
    position seen, until `close()`.

    `position` is where the stream is: pass it as `after_position` to a new
    PlayerStream (another process, a later run) to go on from there. A
    snapshot message does not advance it. Decisions already yielded (the
    same game and version) are not yielded again, whether the server
    repeats them in a snapshot or after it; nor is an open challenge with
    no more seats taken than when it was last yielded.

    Raises GameError when the call is refused (UNAUTHENTICATED /
    UNKNOWN_KEY for a key of no player, INVALID_ARGUMENT, ...) or when
    `max_reopenings` reopenings in a row bring no message. `close()` (from
    any thread) ends the iteration; `reconnect()` drops the connection and
    resumes, as a network failure would.
    """

    def __init__(
        self,
        stub: Any,
        key: str,
        *,
        after_position: int = 0,
        keep_alive_ms: int = 0,
        max_reopenings: int = 10,
        initial_backoff_s: float = 0.05,
        max_backoff_s: float = 2.0,
        on_resume: Callable[[ResumeInfo], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._stub = stub
        self._key = key
        self._keep_alive_ms = keep_alive_ms
        self._max_reopenings = max_reopenings
        self._initial_backoff_s = initial_backoff_s
        self._max_backoff_s = max_backoff_s
        self._on_resume = on_resume
        self._sleep = sleep
        # The last position received (snapshots excepted).
        self.position = after_position
        # Reopenings so far.
        self.resumes = 0
        # The last decision version yielded, by game, while it runs.
        self._decided: dict[str, int] = {}
        # The seats taken when last yielded, by open challenge.
        self._challenged: dict[str, int] = {}
        self._lock = threading.Lock()
        self._call: Any = None
        self._closed = False
        self._dropping = False

    def open(self) -> None:
        """Opens the stream now, if it is not open, and waits until the
        server has answered it: from then on, everything that concerns the
        player reaches this stream. Iterating opens it anyway. A refusal
        (UNKNOWN_KEY, ...) is raised by the iteration."""
        with self._lock:
            if self._closed:
                return
            if self._call is None:
                self._call = self._start()
            call = self._call
        try:
            # Blocks until the response headers come: the server has
            # subscribed the stream (or refused it).
            call.initial_metadata()
        except grpc.RpcError:
            pass  # raised again by the iteration

    def _start(self) -> Any:
        request = pb.WatchPlayerRequest(
            after_position=self.position, keep_alive_ms=self._keep_alive_ms
        )
        return self._stub.WatchPlayer(request, metadata=_auth(self._key))

    def reconnect(self) -> None:
        """Drops the connection, as a network failure would: the iteration
        resumes from the last position seen (for tests, and for a caller
        that suspects a stalled connection)."""
        with self._lock:
            if self._call is not None:
                self._dropping = True
                self._call.cancel()

    def close(self) -> None:
        """Ends the stream: the iteration stops (StopIteration), also when
        another thread is waiting for a message."""
        with self._lock:
            self._closed = True
            if self._call is not None:
                self._call.cancel()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> PlayerStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> PlayerStream:
        return self

    def __next__(self) -> pb.WatchPlayerResponse:
        attempt = 0
        while True:
            with self._lock:
                if self._closed:
                    raise StopIteration
                if self._call is None:
                    self._call = self._start()
                call = self._call
            error: GameError | None = None
            why = "ended"
            try:
                message: pb.WatchPlayerResponse = next(call)
            except StopIteration:
                pass  # the server closed the stream: it is stopping
            except grpc.RpcError as rpc:
                error = GameError.from_rpc_error(rpc)
                why = "failed"
            else:
                with self._lock:
                    dropped = self._dropping or self._closed
                if not dropped:
                    attempt = 0
                    if not message.snapshot:
                        self.position = message.position
                    if self._repeated(message):
                        continue
                    return message
                # Dropped by reconnect() (or closed): what the old
                # connection still delivers comes again after resuming.
            with self._lock:
                if self._closed:
                    raise StopIteration
                asked = self._dropping
                self._dropping = False
                self._call = None
            if asked:
                why = "reconnect"
            elif error is not None and error.code not in RESUMABLE:
                raise error
            attempt += 1
            if attempt > self._max_reopenings:
                raise error or GameError(
                    grpc.StatusCode.UNAVAILABLE,
                    f"WatchPlayer: {attempt - 1} reopenings in a row brought nothing",
                )
            self.resumes += 1
            if self._on_resume is not None:
                self._on_resume(ResumeInfo(self.position, why, attempt, error))
            if not asked:
                self._sleep(min(self._max_backoff_s, self._initial_backoff_s * 2 ** (attempt - 1)))

    def _repeated(self, message: pb.WatchPlayerResponse) -> bool:
        """True for a decision already yielded, or an open challenge no
        further along than when last yielded; keeps track of them."""
        kind = message.WhichOneof("message")
        if kind == "decision":
            game, version = message.decision.game, message.decision.legal.version
            seen = self._decided.get(game)
            if seen is not None and version <= seen:
                return True
            self._decided[game] = version
        elif kind == "game_ended":
            # No decision of a finished game can come.
            self._decided.pop(message.game_ended.game.name, None)
        elif kind == "challenge":
            challenge = message.challenge
            if challenge.status != pb.CHALLENGE_STATUS_OPEN:
                # Its last word: no snapshot shows a closed challenge.
                self._challenged.pop(challenge.name, None)
                return False
            # Seats are only ever taken while it is open.
            taken = sum(seat.accepted for seat in challenge.seats)
            seen = self._challenged.get(challenge.name)
            if seen is not None and taken <= seen:
                return True
            self._challenged[challenge.name] = taken
        return False
