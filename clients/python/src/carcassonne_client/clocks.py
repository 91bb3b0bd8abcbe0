"""Reading the clocks of a game with a time control (docs/rules.md, T-1 to
T-11; docs/client-guide.md, "Clocks and the ways a game ends").

The server's stored times are the only clock that counts. It shows:

- `PendingDecision.deadline_ms`: when the pending decision times out, in
  milliseconds since the Unix epoch by the server's clock (0 when no clock
  runs: no time control, a draw, the end);
- each seat's main time left (`Player.time_left_ms`, or a watched event's
  `time_left_ms[seat]`) as of one moment: the game's `clock_time_ms`, or
  the event's `time_ms`. The seat that owes the pending decision has used
  more since then; the others' clocks stand still.

`seat_clock` works out what is left *now*:

    clock = seat_clock(game, seat)             # or a pb.WatchedEvent
    clock.main_left_ms       # main time left now (None: no main time)
    clock.decision_left_ms   # the pending decision's time left now, when it
                             # is this seat's and a clock runs (else None)

"Now" is this machine's clock unless `now_ms` is given. A program on
another machine than the server should pass its estimate of the server's
time: `ServerClock` makes one from the times the server stored its own
actions at. There is no grace for network delay (T-4): answer with time to
spare.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from carcassonne_client import pb


def local_now_ms() -> int:
    """This machine's clock, in milliseconds since the Unix epoch."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class SeatClock:
    """One seat's clock at one moment ("now")."""

    seat: int
    # Main time left now, in ms (never below 0); None in a game without a
    # main time.
    main_left_ms: int | None
    # Time left now for the pending decision, in ms (never below 0), when
    # this seat owes it and a clock runs; None otherwise.
    decision_left_ms: int | None
    # The pending decision's deadline (ms since the Unix epoch, by the
    # server's clock) when this seat's clock runs; 0 otherwise.
    deadline_ms: int

    @property
    def running(self) -> bool:
        """True when this seat owes the pending decision and its clock runs."""
        return self.deadline_ms != 0


def seat_clock(
    source: pb.Game | pb.WatchedEvent, seat: int, *, now_ms: int | None = None
) -> SeatClock:
    """The clock of `seat` now, from a game (GetGame, Act's answer, a
    watch snapshot) or a watched event.

    `now_ms` is the server's time now as you know it; this machine's clock
    by default. Read from the latest state you have: a game or event that
    is not the last one (a spectator's delayed view) gives the clocks as
    they ran then, not now.
    """
    if isinstance(source, pb.Game):
        player = next((p for p in source.players if p.seat == seat), None)
        if player is None:
            raise ValueError(f"{source.name} has no seat {seat}")
        main = player.time_left_ms if player.HasField("time_left_ms") else None
        as_of = source.clock_time_ms
        pending = source.pending
    elif isinstance(source, pb.WatchedEvent):
        if not 0 <= seat < len(source.scores):
            raise ValueError(f"the event has no seat {seat}")
        # Empty in a game without a main time.
        main = source.time_left_ms[seat] if source.time_left_ms else None
        as_of = source.event.time_ms
        pending = source.pending
    else:
        raise TypeError(f"a pb.Game or a pb.WatchedEvent, not {type(source).__name__}")
    now = local_now_ms() if now_ms is None else now_ms
    running = pending.deadline_ms != 0 and pending.seat == seat
    if not running:
        return SeatClock(seat, main, None, 0)
    used = max(0, now - as_of)
    return SeatClock(
        seat=seat,
        main_left_ms=None if main is None else max(0, main - used),
        decision_left_ms=max(0, pending.deadline_ms - now),
        deadline_ms=pending.deadline_ms,
    )


def clocks(source: pb.Game | pb.WatchedEvent, *, now_ms: int | None = None) -> list[SeatClock]:
    """Every seat's clock now, in seat order (see `seat_clock`)."""
    now = local_now_ms() if now_ms is None else now_ms
    seats = len(source.players) if isinstance(source, pb.Game) else len(source.scores)
    return [seat_clock(source, seat, now_ms=now) for seat in range(seats)]


class ServerClock:
    """The server's clock as a client can know it: this machine's clock
    plus an offset, estimated from the times the server stored the
    client's own actions at.

    An action is stored no earlier than the server received it, so for an
    Act sent at local time `sent_ms` whose first event was stored at
    `stored_ms`, the offset (server minus local) is at most
    `stored_ms - sent_ms`. The estimate is the least such bound seen: it
    may put the server's time a little later than it is (by at most a
    one-way trip), never earlier, so a deadline read with it comes early,
    not late. Until the first observation the offset is taken as 0.
    """

    def __init__(self, local: Callable[[], int] = local_now_ms) -> None:
        self._local = local
        self.offset_ms: int | None = None

    def local_ms(self) -> int:
        """This machine's clock (what `observe` wants as `sent_ms`)."""
        return self._local()

    def now_ms(self) -> int:
        """The server's time now, as far as this client can tell."""
        return self._local() + (self.offset_ms or 0)

    def observe(self, sent_ms: int, stored_ms: int) -> None:
        """Learns from a call sent at local `sent_ms` whose effect the
        server stored at `stored_ms` (an event's `time_ms`)."""
        bound = stored_ms - sent_ms
        if self.offset_ms is None or bound < self.offset_ms:
            self.offset_ms = bound

    def observe_act(self, sent_ms: int, response: pb.ActResponse) -> None:
        """`observe` for an Act's answer: its first event's stored time.
        For a retried Act (same request id), `sent_ms` is when the first
        try was sent: the answer may be that of the first try."""
        if response.events:
            self.observe(sent_ms, response.events[0].time_ms)
