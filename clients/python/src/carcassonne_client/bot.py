"""A bot that creates a game and plays every seat at random to the end, or
plays as a registered player every game the player is seated in.

    python -m carcassonne_client.bot --addr 127.0.0.1:50051 --players 2 \\
        [--river] [--count] [--seed N] [--spectator-delay N] \\
        [--main-ms MS] [--increment-ms MS] [--decision-ms MS] \\
        [--on-timeout forfeit|auto] [--think-ms MS] [--margin-ms MS] \\
        [--resign-seat SEAT] [--resign-after N]
    python -m carcassonne_client.bot --addr 127.0.0.1:50051 \\
        (--key KEY | --key-file FILE) [--games N] [--tournament NAME] [--seed N] \\
        [--accept-challenges]

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

A registered player (--key KEY, or --key-file FILE whose first line is the
key): the bot creates nothing; it opens the player's stream (WatchPlayer)
and plays every decision that comes over it, in every game the player is
seated in (tournament games included), with random legal actions
(registered.RegisteredBot), printing each round, game start and game end.
It stops after --games N of the player's games have ended, once the
tournament --tournament NAME is over (then it prints the final standings),
or on Ctrl-C; without either it plays on until interrupted. It prints each
challenge the stream tells of; with --accept-challenges it accepts the
player's seat of every open challenge naming the player (a game with
other registered players needs the player's consent), and without it
leaves them to a person.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import threading
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
from carcassonne_client.registered import BotRecord, RegisteredBot, random_policy

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
        description="Create a game and play it to the end with random legal actions; "
        "or, with --key, play every game of a registered player.",
    )
    parser.add_argument(
        "--addr", default="127.0.0.1:50051", help="server host:port (default: %(default)s)"
    )
    parser.add_argument(
        "--players",
        type=int,
        default=None,
        choices=range(2, 6),
        metavar="{2..5}",
        help="number of bots (default: 2)",
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
    registered = parser.add_argument_group(
        "a registered player",
        "Play every game of a registered player, over its stream, instead of creating "
        "a game. The options of a new game do not go with these.",
    )
    key = registered.add_mutually_exclusive_group()
    key.add_argument("--key", metavar="KEY", help="the player's API key")
    key.add_argument(
        "--key-file", metavar="FILE", help="a file whose first line is the player's API key"
    )
    registered.add_argument(
        "--games",
        type=_positive,
        metavar="N",
        help="stop once N of the player's games have ended (default: play on)",
    )
    registered.add_argument(
        "--tournament",
        metavar="NAME",
        help="stop once this tournament (tournaments/ID) is over, and print its standings",
    )
    registered.add_argument(
        "--accept-challenges",
        action="store_true",
        help="accept the player's seat of every challenge naming the player, then play the "
        "game (default: leave challenges to a person)",
    )
    args = parser.parse_args(argv)
    if args.key is not None or args.key_file is not None:
        creating = [
            f"--{dest.replace('_', '-')}"
            for dest in _GAME_OPTIONS
            if getattr(args, dest) != parser.get_default(dest)
        ]
        if creating:
            parser.error(f"{', '.join(creating)}: options of a new game, not of --key")
        return args
    if args.games is not None or args.tournament is not None or args.accept_challenges:
        parser.error("--games, --tournament and --accept-challenges need --key or --key-file")
    if args.players is None:
        args.players = 2
    if args.resign_seat is None and args.resign_after is not None:
        parser.error("--resign-after needs --resign-seat")
    if args.resign_seat is not None and not 0 <= args.resign_seat < args.players:
        parser.error(f"--resign-seat: a seat from 0 to {args.players - 1}")
    return args


# The options that describe the game the bot creates.
_GAME_OPTIONS = (
    "players",
    "river",
    "count",
    "spectator_delay",
    "main_ms",
    "increment_ms",
    "decision_ms",
    "on_timeout",
    "think_ms",
    "margin_ms",
    "resign_seat",
    "resign_after",
)


def _positive(text: str) -> int:
    """A whole number of 1 or more."""
    value = _non_negative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be 1 or more: 0")
    return value


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
    if args.key is not None or args.key_file is not None:
        return play_registered(args)
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


def _read_key(args: argparse.Namespace) -> str:
    if args.key is not None:
        return str(args.key)
    with open(args.key_file, encoding="utf-8") as file:
        return file.readline().strip()


def play_registered(args: argparse.Namespace) -> int:
    """--key: plays every decision of the player until --games, the end of
    --tournament, or Ctrl-C."""
    try:
        key = _read_key(args)
    except OSError as error:
        print(f"error: --key-file: {error}", file=sys.stderr)
        return 1
    if not key:
        print("error: the API key is empty", file=sys.stderr)
        return 1
    rng = random.Random(args.seed)
    try:
        with GameClient.connect(args.addr) as client:
            bot = RegisteredBot(
                client,
                key,
                random_policy(rng),
                accept_challenges=args.accept_challenges,
                on_message=_report_message,
            )
            tournament = None
            if args.tournament is not None:
                tournament = client.get_tournament(args.tournament).name
                _stop_when_over(client, tournament, bot)
            try:
                record = bot.run(games=args.games)
            except KeyboardInterrupt:
                bot.stop()
                record = bot.record
            print(format_record(record), flush=True)
            if tournament is not None:
                print(format_standings(client.standings(tournament)))
    except GameError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _stop_when_over(client: GameClient, tournament: str, bot: RegisteredBot) -> None:
    """Stops `bot` once `tournament` is over (a thread follows it)."""

    def follow() -> None:
        try:
            for _ in client.watch_tournament(tournament):
                pass
        except GameError as error:
            print(f"error: following {tournament}: {error}", file=sys.stderr, flush=True)
        bot.stop()

    threading.Thread(target=follow, name=f"follow {tournament}", daemon=True).start()


def _report_message(message: pb.WatchPlayerResponse) -> None:
    """One line for people per round, challenge, game start and game end."""
    kind = message.WhichOneof("message")
    if kind == "challenge":
        print(format_challenge(message.challenge), flush=True)
    if kind == "round_paired":
        paired = message.round_paired
        if paired.bye:
            print(f"{paired.tournament} round {paired.round}: a bye", flush=True)
        else:
            print(
                f"{paired.tournament} round {paired.round}: {', '.join(paired.table)} "
                f"in {', '.join(paired.games)}",
                flush=True,
            )
    elif kind == "game_started":
        game, seat = message.game_started.game, message.game_started.seat
        names = ", ".join(p.name for p in game.players)
        print(f"{game.name} started: seat {seat} of {names}", flush=True)
    elif kind == "game_ended":
        game, seat = message.game_ended.game, message.game_ended.seat
        mine = next((p for p in game.players if p.seat == seat), None)
        placed = f"rank {mine.rank}, {mine.score} points" if mine is not None else "?"
        print(f"{game.name} ended: seat {seat} {placed} ({format_ending(game)})", flush=True)


def format_challenge(challenge: pb.Challenge) -> str:
    """A challenge as it stands, for people: "challenges/c1 from
    players/Ada: OPEN, seats players/Ada (taken), players/Bob (waiting)"."""

    def seat(s: pb.ChallengeSeat) -> str:
        if s.bot:
            return f"{s.bot} bot"
        who = s.player or "open"
        return f"{who} ({'taken' if s.accepted else 'waiting'})"

    status = pb.ChallengeStatus.Name(challenge.status).removeprefix("CHALLENGE_STATUS_")
    rated = " rated" if challenge.rated else ""
    line = f"{challenge.name} from {challenge.challenger}:{rated} {status}, seats " + ", ".join(
        seat(s) for s in challenge.seats
    )
    if challenge.game:
        line += f" -> {challenge.game}"
    if challenge.declined_by:
        line += f" (declined by {challenge.declined_by})"
    return line


def format_record(record: BotRecord) -> str:
    """What a registered player's bot did, for people."""
    moved = ", ".join(f"{n} {reason}" for reason, n in sorted(record.moved_on.items()))
    accepted = f", accepted {len(record.accepted)} challenges" if record.accepted else ""
    return f"played {record.actions} actions in {len(record.ended)} games ended{accepted}" + (
        f" (moved on: {moved})" if moved else ""
    )


def format_standings(standings: pb.Standings) -> str:
    """A tournament's standings, for people."""
    state = "final standings" if standings.final else f"standings after round {standings.round}"
    lines = [f"{standings.tournament} {state}:"]
    width = max((len(s.player) for s in standings.standings), default=0)
    for s in standings.standings:
        out = "  withdrawn" if s.withdrawn else ""
        lines.append(
            f"  {s.rank:>3}  {s.player:<{width}}  {s.points:>6} points  "
            f"buchholz {s.buchholz}  firsts {s.firsts}  score {s.game_score}{out}"
        )
    return "\n".join(lines)


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
