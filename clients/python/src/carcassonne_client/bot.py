"""A bot that creates a game and plays every seat at random to the end.

    python -m carcassonne_client.bot --addr 127.0.0.1:50051 --players 2 \\
        [--river] [--count] [--seed N]

The server lists the legal actions of each decision, so the bot knows no
rules: it picks one of them with a seeded random generator. With --seed, the
game's draw order is derived from the same number, so a run replays exactly
against the same server version.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from collections.abc import Callable, Sequence

from carcassonne_client import pb
from carcassonne_client.client import CreatedGame, GameClient, rule_options
from carcassonne_client.errors import GameError

# Far more decisions than any game has (about two per tile, plus the Count's),
# so that a server that never ends a game fails the bot instead of hanging it.
MAX_STEPS = 10_000


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
) -> tuple[pb.Game, int]:
    """Plays `created` to its end, each decision by the seat it waits for,
    with a random legal action. Returns the final game and the number of
    actions played. `on_response` sees every answer to Act, with the events
    and score changes each action caused.

    Every read sends the token of a seat, as a seat's program does: without
    it, a game with a spectator delay would show an earlier version."""
    name = created.name
    # Seat 0 decides first; then the seat the game waits for.
    token = created.tokens[0]
    for step in range(max_steps):
        legal = client.legal_actions(name, token)
        if legal.finished:
            return client.get_game(name, token), step
        if not legal.actions:
            raise RuntimeError(
                f"{name} at version {legal.version} waits for a decision but lists no legal action"
            )
        action = rng.choice(legal.actions)
        token = created.tokens[legal.pending.seat]
        response = client.act(name, token, legal.version, action)
        if on_response is not None:
            on_response(response)
    raise RuntimeError(f"{name} did not end within {max_steps} actions")


def seed_matches_commitment(game: pb.Game) -> bool:
    """True when the revealed seed hashes to the SHA-256 published at the
    game's creation, i.e. nobody chose the draw order afterwards."""
    if not game.seed:
        return False
    return hashlib.sha256(bytes.fromhex(game.seed)).hexdigest() == game.seed_sha256


def format_result(game: pb.Game, steps: int) -> str:
    """The final scores and winners, for people."""
    winners = set(game.winners)
    width = max(len(p.name) for p in game.players)
    lines = [f"{game.name} finished after {steps} actions (version {game.version})"]
    for player in game.players:
        mark = "  winner" if player.seat in winners else ""
        lines.append(f"  seat {player.seat}  {player.name:<{width}}  {player.score:>4}{mark}")
    names = ", ".join(p.name for p in game.players if p.seat in winners)
    lines.append(f"winners: {names}")
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
    return parser.parse_args(argv)


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
            )
            print(f"created {created.name} for {args.players} players", flush=True)
            game, steps = play_random_game(client, created, rng)
    except (GameError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(format_result(game, steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
