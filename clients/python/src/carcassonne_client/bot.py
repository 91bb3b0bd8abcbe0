"""A bot that creates a game and plays every seat at random to the end.

    python -m carcassonne_client.bot --addr 127.0.0.1:50051 --players 2 \\
        [--river] [--count] [--seed N] [--spectator-delay N] \\
        [--main-ms MS] [--increment-ms MS] [--decision-ms MS] \\
        [--on-timeout forfeit|auto] [--think-ms MS] [--margin-ms MS] \\
        [--resign-seat SEAT] [--resign-after N]

The server lists the legal actions of each decision, so the bot knows no
rules: it picks one of them with a seeded random generator. With --seed, the
game's draw order is derived from the same number, so a run replays exactly
against the same server version.

Clocks: with a time control (--main-ms, --decision-ms, ...), the bot never
lets a deadline pass needlessly. It answers at once, unless told to "think"
(--think-ms, a pause before each answer, for demos); a pause is cut short
so that the answer is sent at least the safety margin (--margin-ms,
SAFETY_MARGIN_MS = 1000 by default) before the decision's `deadline_ms`,
and a decision that comes with less than the margin left is answered at
once. The deadline is read by the server's clock, estimated from the times
the server stored the bot's own actions (clocks.ServerClock). A seat that
is timed out all the same (OUT_OF_TIME) is reported, and the game goes on
if the server goes on with it. At the end the bot prints how the game ended
(`Game.ending`), each seat's rank, and the main time each seat had left.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from carcassonne_client import pb
from carcassonne_client.client import (
    CreatedGame,
    GameClient,
    LegalActions,
    TimeoutRuleName,
    rule_options,
    time_control,
)
from carcassonne_client.clocks import ServerClock
from carcassonne_client.errors import GameError

# Far more decisions than any game has (about two per tile, plus the Count's),
# so that a server that never ends a game fails the bot instead of hanging it.
MAX_STEPS = 10_000

# How long before a decision's deadline the bot sends its answer at the
# latest (when it thinks at all). The client guide asks for "a second or
# more": the answer must be stored, not sent, before the deadline.
SAFETY_MARGIN_MS = 1000


@dataclass(frozen=True)
class Resignation:
    """Makes `seat` resign at its first decision after `after` actions of
    its own (0: at its first decision)."""

    seat: int
    after: int


def game_seed(seed: int) -> bytes:
    """The 32-byte draw seed that --seed N stands for."""
    return hashlib.sha256(f"carcassonne-client bot seed {seed}".encode()).digest()


def play_random_game(
    client: GameClient,
    created: CreatedGame,
    rng: random.Random,
    *,
    max_steps: int = MAX_STEPS,
    on_response: Callable[[pb.ActResponse], None] | None = None,
    on_decision: Callable[[LegalActions], None] | None = None,
    on_late: Callable[[LegalActions, GameError], None] | None = None,
    think_ms: int = 0,
    margin_ms: int = SAFETY_MARGIN_MS,
    resign: Resignation | None = None,
    clock: ServerClock | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[pb.Game, int]:
    """Plays `created` to its end, each decision by the seat it waits for,
    with a random legal action. Returns the final game (its `ending` says
    how it ended) and the number of actions played. `on_decision` sees each
    decision before it is answered, `on_response` every answer to Act, with
    the events and score changes each action caused.

    In a game with a clock, a decision's answer is sent at once, or after
    thinking `think_ms` at most, and then at least `margin_ms` before its
    `deadline_ms` by the server's `clock` (estimated from the bot's own
    actions unless given); one that comes with less left is answered at
    once. An answer the server refuses as late (OUT_OF_TIME: it stored the
    seat's timeout instead) goes to `on_late` (else it is raised), and the
    game goes on as the server left it. `resign` makes a seat resign.

    Every read sends the token of a seat, as a seat's program does: without
    it, a game with a spectator delay would show an earlier version."""
    name = created.name
    clock = clock or ServerClock()
    played = 0
    acted: Counter[int] = Counter()
    # Seat 0 decides first; then the seat the game waits for.
    token = created.tokens[0]
    for _ in range(max_steps):
        legal = client.legal_actions(name, token)
        if legal.finished:
            return client.get_game(name, token), played
        if not legal.actions:
            raise RuntimeError(
                f"{name} at version {legal.version} waits for a decision but lists no legal action"
            )
        seat = legal.pending.seat
        token = created.tokens[seat]
        if on_decision is not None:
            on_decision(legal)
        if resign is not None and seat == resign.seat and acted[seat] >= resign.after:
            # Resigning needs no thought.
            action = pb.Action(resign=pb.Resign())
        else:
            action = rng.choice(legal.actions)
            if think_ms > 0:
                sleep(_thinking_ms(think_ms, legal.pending.deadline_ms, margin_ms, clock) / 1000)
        sent = clock.local_ms()
        try:
            response = client.act(name, token, legal.version, action)
        except GameError as error:
            if error.reason != "OUT_OF_TIME" or on_late is None:
                raise
            on_late(legal, error)
            continue
        clock.observe_act(sent, response)
        played += 1
        acted[seat] += 1
        if on_response is not None:
            on_response(response)
    raise RuntimeError(f"{name} did not end within {max_steps} actions")


def _thinking_ms(think_ms: int, deadline_ms: int, margin_ms: int, clock: ServerClock) -> int:
    """How long to think before answering: `think_ms`, cut so that the
    answer leaves at least `margin_ms` before the deadline (0: none)."""
    if deadline_ms == 0:
        return think_ms
    return max(0, min(think_ms, deadline_ms - margin_ms - clock.now_ms()))


def seed_matches_commitment(game: pb.Game) -> bool:
    """True when the revealed seed hashes to the SHA-256 published at the
    game's creation, i.e. nobody chose the draw order afterwards."""
    if not game.seed:
        return False
    return hashlib.sha256(bytes.fromhex(game.seed)).hexdigest() == game.seed_sha256


def format_ending(game: pb.Game) -> str:
    """How the game ended (`Game.ending`), for people, after the reason's
    name: "RESIGNED: seat 1 (Bot 1) resigned"."""
    reason = game.ending.reason
    seat = game.ending.seat
    names = {p.seat: p.name for p in game.players}
    who = f"seat {seat} ({names.get(seat, '?')})"
    if reason == pb.END_REASON_NORMAL:
        return "NORMAL: the last tile was played"
    if reason == pb.END_REASON_OUT_OF_TIME:
        return f"OUT_OF_TIME: {who} ran out of time"
    if reason == pb.END_REASON_RESIGNED:
        return f"RESIGNED: {who} resigned"
    if reason == pb.END_REASON_ABORTED:
        return f"ABORTED: {who} aborted the game, which has no result"
    return f"{pb.EndReason.Name(reason)}: (unknown to this bot)"


_OUT = {pb.SEAT_STATUS_OUT_OF_TIME: "out of time", pb.SEAT_STATUS_RESIGNED: "resigned"}


def format_result(game: pb.Game, steps: int) -> str:
    """How the game ended, the final scores, ranks, main time left and
    winners, for people."""
    winners = set(game.winners)
    width = max(len(p.name) for p in game.players)
    lines = [
        f"{game.name} finished after {steps} actions (version {game.version})",
        f"ending: {format_ending(game)}",
    ]
    for player in game.players:
        rank = f"rank {player.rank}" if player.rank else "rank -"
        left = (
            f"  {player.time_left_ms / 1000:.1f} s left" if player.HasField("time_left_ms") else ""
        )
        out = f"  {_OUT[player.status]}" if player.status in _OUT else ""
        mark = "  winner" if player.seat in winners else ""
        lines.append(
            f"  seat {player.seat}  {player.name:<{width}}  {player.score:>4}  {rank}"
            f"{left}{out}{mark}"
        )
    names = ", ".join(p.name for p in game.players if p.seat in winners)
    lines.append(f"winners: {names or 'none'}")
    verdict = "matches" if seed_matches_commitment(game) else "DOES NOT MATCH"
    lines.append(f"seed {game.seed} {verdict} its commitment {game.seed_sha256}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m carcassonne_client.bot",
        description="Create a game and play it to the end with random legal actions.",
    )
    parser.add_argument(
        "--addr", default="127.0.0.1:50051", help="server host:port (default: %(default)s)"
    )
    parser.add_argument(
        "--players",
        type=int,
        default=2,
        choices=range(2, 6),
        metavar="{2..5}",
        help="number of bots (default: %(default)s)",
    )
    parser.add_argument("--river", action="store_true", help="play with the River")
    parser.add_argument("--count", action="store_true", help="play with the Count of Carcassonne")
    parser.add_argument(
        "--spectator-delay",
        type=int,
        default=0,
        metavar="N",
        help="spectators see the game N events behind (default: %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the bots' choices and of the draw order (default: random)",
    )
    clock = parser.add_argument_group(
        "clocks",
        "A time control for the game (rules T-1 to T-11): without --main-ms, "
        "--increment-ms, --decision-ms and --on-timeout no clock runs. --think-ms "
        "and --margin-ms say how the bots use their time.",
    )
    clock.add_argument("--main-ms", type=_non_negative, metavar="MS", help="each seat's main time")
    clock.add_argument(
        "--increment-ms",
        type=_non_negative,
        metavar="MS",
        help="added to a seat's main time each time it hands the game over",
    )
    clock.add_argument(
        "--decision-ms", type=_non_negative, metavar="MS", help="the limit per decision"
    )
    clock.add_argument(
        "--on-timeout",
        choices=["forfeit", "auto"],
        help="what a timeout does: the seat goes out, or the server decides for it "
        "(default: forfeit)",
    )
    clock.add_argument(
        "--think-ms",
        type=_non_negative,
        default=0,
        metavar="MS",
        help="pause before each answer, cut short by the margin (default: 0, answer at once)",
    )
    clock.add_argument(
        "--margin-ms",
        type=_non_negative,
        default=SAFETY_MARGIN_MS,
        metavar="MS",
        help="send each answer at least this long before its deadline (default: %(default)s)",
    )
    demo = parser.add_argument_group("resigning (for demos and tests)")
    demo.add_argument(
        "--resign-seat", type=int, metavar="SEAT", help="this seat resigns (see --resign-after)"
    )
    demo.add_argument(
        "--resign-after",
        type=_non_negative,
        metavar="N",
        help="... at its first decision after N actions of its own (default: 0)",
    )
    args = parser.parse_args(argv)
    if args.resign_seat is None and args.resign_after is not None:
        parser.error("--resign-after needs --resign-seat")
    if args.resign_seat is not None and not 0 <= args.resign_seat < args.players:
        parser.error(f"--resign-seat: a seat from 0 to {args.players - 1}")
    return args


def _non_negative(text: str) -> int:
    """A whole number of 0 or more (milliseconds, or a count)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value}")
    return value


def clock_of(args: argparse.Namespace) -> pb.TimeControl | None:
    """The time control the options ask for; None when none of them is given."""
    given = (args.main_ms, args.increment_ms, args.decision_ms, args.on_timeout)
    if all(option is None for option in given):
        return None
    on_timeout: TimeoutRuleName = args.on_timeout or "forfeit"
    return time_control(
        main_ms=args.main_ms or 0,
        increment_ms=args.increment_ms or 0,
        decision_ms=args.decision_ms or 0,
        on_timeout=on_timeout,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rng = random.Random(args.seed)
    seed = None if args.seed is None else game_seed(args.seed)
    players = [f"Bot {seat}" for seat in range(args.players)]
    try:
        with GameClient.connect(args.addr) as client:
            created = client.create_game(
                players,
                rules=rule_options(river=args.river, count=args.count),
                seed=seed,
                spectator_delay=args.spectator_delay,
                time_control=clock_of(args),
            )
            print(f"created {created.name} for {args.players} players", flush=True)
            resign = None
            if args.resign_seat is not None:
                resign = Resignation(args.resign_seat, args.resign_after or 0)
            game, steps = play_random_game(
                client,
                created,
                rng,
                think_ms=args.think_ms,
                margin_ms=args.margin_ms,
                resign=resign,
                on_late=_report_late,
            )
    except (GameError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(format_result(game, steps))
    return 0


def _report_late(legal: LegalActions, error: GameError) -> None:
    print(
        f"seat {legal.pending.seat} answered too late at version {legal.version}: "
        f"{error.reason}, the server stored its timeout (deadline_ms "
        f"{error.metadata.get('deadline_ms', '?')})",
        file=sys.stderr,
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
