"""A typed client for the Carcassonne gRPC server, and a random bot.

    from carcassonne_client import GameClient, GameError, pb

    with GameClient.connect("127.0.0.1:50051") as client:
        created = client.create_game(["Ada", "Bob"])
        legal = client.legal_actions(created.name)
        client.act(created.name, created.tokens[legal.pending.seat],
                   legal.version, legal.actions[0])

Names are resolved lazily so that `python -m carcassonne_client.generate`
can run before the generated code it produces exists.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from carcassonne_client import pb
    from carcassonne_client.client import CreatedGame, GameClient, LegalActions, time_control
    from carcassonne_client.clocks import SeatClock, seat_clock
    from carcassonne_client.errors import GameError

__all__ = [
    "CreatedGame",
    "GameClient",
    "GameError",
    "LegalActions",
    "SeatClock",
    "pb",
    "seat_clock",
    "time_control",
]

_HOMES = {
    "CreatedGame": "carcassonne_client.client",
    "GameClient": "carcassonne_client.client",
    "LegalActions": "carcassonne_client.client",
    "time_control": "carcassonne_client.client",
    "SeatClock": "carcassonne_client.clocks",
    "seat_clock": "carcassonne_client.clocks",
    "GameError": "carcassonne_client.errors",
}


def __getattr__(name: str) -> Any:
    if name == "pb":
        return importlib.import_module("carcassonne_client.pb")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'carcassonne_client' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
