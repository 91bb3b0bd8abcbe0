"""The one exception the client raises for a failed call.

The server attaches a google.rpc.Status to every error, in the trailing
metadata "grpc-status-details-bin", with an ErrorInfo detail whose reason a
program can branch on (see game_service.proto). GameError carries the gRPC
code, that reason and the ErrorInfo's metadata.

The reasons (docs/client-guide.md, "Errors and their reasons", has the
whole table), by code:

- INVALID_ARGUMENT: INVALID_ARGUMENT (metadata `field`; e.g. a request id
  beginning with "~", which marks the server's own), MALFORMED_REQUEST,
  UNKNOWN_BOT_LEVEL (metadata `field` "bots" or "house_bots": a bot
  seat's or a house bot's level is none of the built-in bots').
- FAILED_PRECONDITION: RULE_VIOLATION (metadata `rule`, an id of
  docs/rules.md, e.g. T-9 for an abort after every seat has decided),
  WRONG_DECISION, GAME_FINISHED, and OUT_OF_TIME (metadata `seat`,
  `deadline_ms`, `rule` T-4): the action came at or after its seat's
  deadline, and the server stored the timeout instead (also the answer to
  an action on a version its seat's timeout has since replaced). There is
  no grace for network delay: act with time to spare. GAME_NOT_FINISHED:
  the archive of a game still running. GAME_SEALED: a duplicate-bag
  tournament game read by someone outside its seats while its round runs.
- FAILED_PRECONDITION: TOURNAMENT_STATE: the tournament's state does not
  allow it (withdrawing a player twice, exporting a running tournament).
- FAILED_PRECONDITION, of challenges: CHALLENGE_CLOSED (accepted, declined
  or cancelled already), CHALLENGE_EXPIRED (it lapsed), ALREADY_SEATED
  (AcceptChallenge by a player holding a seat of it already, the
  challenger always), SEAT_NOT_OPEN (AcceptChallenge's `seat` is no open
  seat left), CHALLENGER_DECLINES (the challenger cancels instead).
- ABORTED: STALE_VERSION (metadata `version`, the current one).
- UNAUTHENTICATED: MISSING_TOKEN, UNKNOWN_KEY (a key of no registered
  player, e.g. on WatchPlayer or CreateTournament). PERMISSION_DENIED:
  BAD_TOKEN, NOT_YOUR_TURN (metadata `seat`, whose decision it is),
  REGISTRATION_CLOSED (the server registers players only with its admin
  key), NOT_ADMIN (SetOrganiser without the admin key), NOT_ORGANISER
  (creating a tournament, or withdrawing from one, without an organiser's
  key, or the tournament's organiser's), CONSENT_REQUIRED (CreateGame
  naming a registered player other than the caller, whose key it sends,
  or asking for `rated`: other players agree through a challenge),
  NOT_INVITED (accepting or declining a challenge with no seat of it for
  the caller), NOT_CHALLENGER (cancelling another's challenge).
- NOT_FOUND: GAME_NOT_FOUND, PLAYER_NOT_FOUND (metadata `name`),
  TOURNAMENT_NOT_FOUND (metadata `name`), CHALLENGE_NOT_FOUND (metadata
  `name`).
- ALREADY_EXISTS: GAME_ALREADY_CREATED (metadata `name`), REQUEST_ID_REUSED,
  NAME_TAKEN (metadata `name`: names are unique regardless of case).
- RESOURCE_EXHAUSTED: RESOURCE_EXHAUSTED, REQUEST_TOO_LARGE (metadata
  `limit`), TOO_MANY_STREAMS (metadata `limit` and `scope`: too many
  streams open on the connection or on the server), BOTS_BUSY (a game
  with bots while the server's bots are busy), TOO_MANY_CHALLENGES
  (metadata `limit`: open challenges per challenger), REGISTRATION_RATE
  (metadata `retry_after_ms`). UNAVAILABLE: SHUTTING_DOWN,
  STORAGE_UNAVAILABLE.
- DATA_LOSS: CORRUPT_GAME. INTERNAL: INTERNAL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2

STATUS_DETAILS_KEY = "grpc-status-details-bin"

# Every reason the server gives (src/api/status.rs), by name, so that a
# program compares with a constant rather than a string it might misspell:
# `error.reason == Reason.NOT_ORGANISER`.


class Reason:
    """The ErrorInfo reasons of the server's errors (see the module's
    docstring for when each comes)."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    MALFORMED_REQUEST = "MALFORMED_REQUEST"
    UNKNOWN_BOT_LEVEL = "UNKNOWN_BOT_LEVEL"
    RULE_VIOLATION = "RULE_VIOLATION"
    WRONG_DECISION = "WRONG_DECISION"
    GAME_FINISHED = "GAME_FINISHED"
    GAME_NOT_FINISHED = "GAME_NOT_FINISHED"
    GAME_SEALED = "GAME_SEALED"
    OUT_OF_TIME = "OUT_OF_TIME"
    STALE_VERSION = "STALE_VERSION"
    MISSING_TOKEN = "MISSING_TOKEN"
    BAD_TOKEN = "BAD_TOKEN"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    GAME_NOT_FOUND = "GAME_NOT_FOUND"
    GAME_ALREADY_CREATED = "GAME_ALREADY_CREATED"
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"
    REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
    TOO_MANY_STREAMS = "TOO_MANY_STREAMS"
    PLAYER_NOT_FOUND = "PLAYER_NOT_FOUND"
    NAME_TAKEN = "NAME_TAKEN"
    REGISTRATION_CLOSED = "REGISTRATION_CLOSED"
    NOT_ADMIN = "NOT_ADMIN"
    NOT_ORGANISER = "NOT_ORGANISER"
    UNKNOWN_KEY = "UNKNOWN_KEY"
    TOURNAMENT_NOT_FOUND = "TOURNAMENT_NOT_FOUND"
    TOURNAMENT_STATE = "TOURNAMENT_STATE"
    CONSENT_REQUIRED = "CONSENT_REQUIRED"
    NOT_INVITED = "NOT_INVITED"
    NOT_CHALLENGER = "NOT_CHALLENGER"
    CHALLENGE_NOT_FOUND = "CHALLENGE_NOT_FOUND"
    CHALLENGE_CLOSED = "CHALLENGE_CLOSED"
    CHALLENGE_EXPIRED = "CHALLENGE_EXPIRED"
    ALREADY_SEATED = "ALREADY_SEATED"
    SEAT_NOT_OPEN = "SEAT_NOT_OPEN"
    CHALLENGER_DECLINES = "CHALLENGER_DECLINES"
    TOO_MANY_CHALLENGES = "TOO_MANY_CHALLENGES"
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    BOTS_BUSY = "BOTS_BUSY"
    REGISTRATION_RATE = "REGISTRATION_RATE"
    SHUTTING_DOWN = "SHUTTING_DOWN"
    STORAGE_UNAVAILABLE = "STORAGE_UNAVAILABLE"
    CORRUPT_GAME = "CORRUPT_GAME"
    INTERNAL = "INTERNAL"


class GameError(Exception):
    """A call the server (or the transport) rejected.

    `reason` is the ErrorInfo reason, e.g. "BAD_TOKEN", "STALE_VERSION" or
    "OUT_OF_TIME" (see the module's docstring for all of them);
    None when the error came without one (a transport failure, or a server
    that sends no details), in which case `message` is all there is.
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: str | None = None,
        metadata: Mapping[str, str] | None = None,
        domain: str | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata: dict[str, str] = dict(metadata or {})
        self.domain = domain
        super().__init__(str(self))

    def __str__(self) -> str:
        why = f" {self.reason}" if self.reason else ""
        extra = "".join(f" {k}={v}" for k, v in sorted(self.metadata.items()))
        return f"{self.code.name}{why}: {self.message}{extra}"

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> GameError:
        """Reads the code, message and ErrorInfo of a failed call."""
        # Errors raised by calls are also grpc.Call objects; others (rare)
        # carry nothing more than their text.
        code = _call_attr(error, "code") or grpc.StatusCode.UNKNOWN
        message = _call_attr(error, "details") or str(error)
        info = _error_info(_call_attr(error, "trailing_metadata") or ())
        if info is None:
            return cls(code, message)
        return cls(code, message, info.reason, dict(info.metadata), info.domain)


def _call_attr(error: grpc.RpcError, name: str) -> Any:
    method = getattr(error, name, None)
    return method() if callable(method) else None


def _error_info(
    trailing_metadata: Iterable[tuple[str, str | bytes]],
) -> error_details_pb2.ErrorInfo | None:
    """The first ErrorInfo in the google.rpc.Status of the trailers, if any.

    Parsed directly rather than with grpc_status.rpc_status.from_call, which
    throws the details away when the status message differs in any way from
    the transport's one.
    """
    for key, value in trailing_metadata:
        if key != STATUS_DETAILS_KEY or not isinstance(value, bytes):
            continue
        try:
            status = status_pb2.Status.FromString(value)
        except DecodeError:
            return None  # unreadable details: the message still stands
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):  # False when the detail is of another type
                return info
    return None
