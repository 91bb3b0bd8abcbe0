"""The generated messages and enums of carcassonne.v1, in one namespace.

    from carcassonne_client import pb
    action = pb.Action(place_tile=pb.PlaceTile(position=pb.Position(x=1, y=0)))

All the protos share the package carcassonne.v1, so their names cannot clash.
The modules themselves are generated at install time (see generate.py).
"""

from carcassonne_client._gen.carcassonne.v1.challenge_service_pb2 import *  # noqa: F401,F403
from carcassonne_client._gen.carcassonne.v1.challenge_service_pb2_grpc import (
    ChallengeServiceStub as ChallengeServiceStub,
)
from carcassonne_client._gen.carcassonne.v1.game_pb2 import *  # noqa: F401,F403
from carcassonne_client._gen.carcassonne.v1.game_service_pb2 import *  # noqa: F401,F403
from carcassonne_client._gen.carcassonne.v1.game_service_pb2_grpc import (
    GameServiceStub as GameServiceStub,
)
from carcassonne_client._gen.carcassonne.v1.player_service_pb2 import *  # noqa: F401,F403
from carcassonne_client._gen.carcassonne.v1.player_service_pb2_grpc import (
    PlayerServiceStub as PlayerServiceStub,
)
from carcassonne_client._gen.carcassonne.v1.tournament_service_pb2 import *  # noqa: F401,F403
from carcassonne_client._gen.carcassonne.v1.tournament_service_pb2_grpc import (
    TournamentServiceStub as TournamentServiceStub,
)
from carcassonne_client._gen.carcassonne.v1.types_pb2 import *  # noqa: F401,F403
from carcassonne_client._gen.carcassonne.v1.watch_service_pb2 import *  # noqa: F401,F403
from carcassonne_client._gen.carcassonne.v1.watch_service_pb2_grpc import (
    WatchServiceStub as WatchServiceStub,
)
