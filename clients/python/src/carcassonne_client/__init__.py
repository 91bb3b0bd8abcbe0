"""A typed client for the Carcassonne gRPC server, a random bot, and a bot
that plays every game of a registered player over its stream.

    from carcassonne_client import GameClient, GameError, pb

    with GameClient.connect("127.0.0.1:50051") as client:
        created = client.create_game(["Ada", "Bob"])
        legal = client.legal_actions(created.name)
        client.act(created.name, created.tokens[legal.pending.seat],
                   legal.version, legal.actions[0])

A registered player (PlayerService), challenges (ChallengeService: how
registered players agree to a game) and tournaments (TournamentService):

    ada = client.register_player("Ada")              # ada.api_key, shown once
    bot = RegisteredBot(client, ada.api_key, random_policy(),
                        accept_challenges=True)
    threading.Thread(target=bot.run).start()         # every decision of Ada's
    client.create_challenge(bob_key, ["Bob", "Ada"]) # Ada's bot accepts it
    client.create_tournament(organiser_key, ["Ada", "Bob"], rounds=1,
                             time_control=time_control(decision_ms=30_000))

Names are resolved lazily so that `python -m carcassonne_client.generate`
can run before the generated code it produces exists.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from carcassonne_client import pb
    from carcassonne_client.client import (
        CreatedGame,
        GameClient,
        LegalActions,
        Registration,
        time_control,
    )
    from carcassonne_client.clocks import SeatClock, seat_clock
    from carcassonne_client.errors import GameError, Reason
    from carcassonne_client.player_stream import PlayerStream
    from carcassonne_client.registered import Decision, Policy, RegisteredBot, random_policy

__all__ = [
    "CreatedGame",
    "Decision",
    "GameClient",
    "GameError",
    "LegalActions",
    "PlayerStream",
    "Policy",
    "Reason",
    "RegisteredBot",
    "Registration",
    "SeatClock",
    "pb",
    "random_policy",
    "seat_clock",
    "time_control",
]

_HOMES = {
    "CreatedGame": "carcassonne_client.client",
    "GameClient": "carcassonne_client.client",
    "LegalActions": "carcassonne_client.client",
    "Registration": "carcassonne_client.client",
    "time_control": "carcassonne_client.client",
    "SeatClock": "carcassonne_client.clocks",
    "seat_clock": "carcassonne_client.clocks",
    "GameError": "carcassonne_client.errors",
    "Reason": "carcassonne_client.errors",
    "PlayerStream": "carcassonne_client.player_stream",
    "Decision": "carcassonne_client.registered",
    "Policy": "carcassonne_client.registered",
    "RegisteredBot": "carcassonne_client.registered",
    "random_policy": "carcassonne_client.registered",
}


def __getattr__(name: str) -> Any:
    if name == "pb":
        return importlib.import_module("carcassonne_client.pb")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'carcassonne_client' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
