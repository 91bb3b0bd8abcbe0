// The one error type the client throws for a failed call.
//
// The server attaches a google.rpc.Status to every error (the
// `grpc-status-details-bin` trailer) with a google.rpc.ErrorInfo detail
// whose `reason` a program branches on (docs/client-guide.md, "Errors and
// their reasons", has the whole table). By code:
// - INVALID_ARGUMENT: INVALID_ARGUMENT (metadata `field`; e.g. a request id
//   beginning with "~", which marks the server's own), MALFORMED_REQUEST,
//   UNKNOWN_BOT_LEVEL (metadata `field` "bots" or "house_bots": a bot
//   seat's or a house bot's level is none of the built-in bots').
// - FAILED_PRECONDITION: RULE_VIOLATION (metadata `rule`, an id of
//   docs/rules.md, e.g. T-9 for an abort after every seat has decided),
//   WRONG_DECISION, GAME_FINISHED, and OUT_OF_TIME (metadata `seat`,
//   `deadline_ms`, `rule` T-4): the action came at or after its seat's
//   deadline, and the server stored the timeout instead (also the answer to
//   an action on a version its seat's timeout has since replaced). There is
//   no grace for network delay: act with time to spare. GAME_NOT_FINISHED:
//   the archive of a game still running. GAME_SEALED: a duplicate-bag
//   tournament game read by someone outside its seats while its round
//   runs. TOURNAMENT_STATE: the
//   tournament's state does not allow it (withdrawing a player twice,
//   exporting a running tournament). Of challenges: CHALLENGE_CLOSED
//   (accepted, declined or cancelled already), CHALLENGE_EXPIRED (it
//   lapsed), ALREADY_SEATED (AcceptChallenge by a player holding a seat of
//   it already, the challenger always), SEAT_NOT_OPEN (AcceptChallenge's
//   `seat` is no open seat left), CHALLENGER_DECLINES (the challenger
//   cancels instead).
// - ABORTED: STALE_VERSION (metadata `version`, the current one).
// - UNAUTHENTICATED: MISSING_TOKEN, UNKNOWN_KEY (a key of no registered
//   player, e.g. on WatchPlayer or CreateTournament). PERMISSION_DENIED:
//   BAD_TOKEN, NOT_YOUR_TURN (metadata `seat`, whose decision it is),
//   REGISTRATION_CLOSED (the server registers players only with its admin
//   key), NOT_ADMIN (SetOrganiser without the admin key), NOT_ORGANISER
//   (creating a tournament, or withdrawing from one, without an
//   organiser's key, or the tournament's organiser's), CONSENT_REQUIRED
//   (CreateGame naming a registered player other than the caller, whose
//   key it sends, or asking for `rated`: other players agree through a
//   challenge), NOT_INVITED (accepting or declining a challenge with no
//   seat of it for the caller), NOT_CHALLENGER (cancelling another's
//   challenge).
// - NOT_FOUND: GAME_NOT_FOUND, PLAYER_NOT_FOUND (metadata `name`),
//   TOURNAMENT_NOT_FOUND (metadata `name`), CHALLENGE_NOT_FOUND (metadata
//   `name`).
// - ALREADY_EXISTS: GAME_ALREADY_CREATED (metadata `name`), REQUEST_ID_REUSED,
//   NAME_TAKEN (metadata `name`: names are unique regardless of case).
// - RESOURCE_EXHAUSTED: RESOURCE_EXHAUSTED, REQUEST_TOO_LARGE (metadata
//   `limit`), TOO_MANY_STREAMS (metadata `limit` and `scope`: too many
//   streams open on the connection or on the server), BOTS_BUSY (a game
//   with bots while the server's bots are busy), TOO_MANY_CHALLENGES
//   (metadata `limit`: open challenges per challenger), REGISTRATION_RATE
//   (metadata `retry_after_ms`). UNAVAILABLE: SHUTTING_DOWN,
//   STORAGE_UNAVAILABLE (the client retries UNAVAILABLE).
// - DATA_LOSS: CORRUPT_GAME. INTERNAL: INTERNAL.
// Connect-ES parses the Status into `ConnectError.details` and decodes a
// detail given its message descriptor. ErrorInfo is not among the
// well-known types @bufbuild/protobuf ships, and the npm registry has no
// well-kept package of the googleapis types for protobuf-es v2, so its
// descriptor is built here, at run time, from the three fields of
// google/rpc/error_details.proto.

import { create, createFileRegistry, type DescMessage } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

/** Every reason the server gives (src/api/status.rs), by name, so that a
 * program compares with a constant rather than a string it might
 * misspell: `error.reason === Reason.NOT_ORGANISER`. */
export const Reason = {
  INVALID_ARGUMENT: "INVALID_ARGUMENT",
  MALFORMED_REQUEST: "MALFORMED_REQUEST",
  UNKNOWN_BOT_LEVEL: "UNKNOWN_BOT_LEVEL",
  RULE_VIOLATION: "RULE_VIOLATION",
  WRONG_DECISION: "WRONG_DECISION",
  GAME_FINISHED: "GAME_FINISHED",
  GAME_NOT_FINISHED: "GAME_NOT_FINISHED",
  GAME_SEALED: "GAME_SEALED",
  OUT_OF_TIME: "OUT_OF_TIME",
  STALE_VERSION: "STALE_VERSION",
  MISSING_TOKEN: "MISSING_TOKEN",
  BAD_TOKEN: "BAD_TOKEN",
  NOT_YOUR_TURN: "NOT_YOUR_TURN",
  GAME_NOT_FOUND: "GAME_NOT_FOUND",
  GAME_ALREADY_CREATED: "GAME_ALREADY_CREATED",
  REQUEST_ID_REUSED: "REQUEST_ID_REUSED",
  REQUEST_TOO_LARGE: "REQUEST_TOO_LARGE",
  TOO_MANY_STREAMS: "TOO_MANY_STREAMS",
  PLAYER_NOT_FOUND: "PLAYER_NOT_FOUND",
  NAME_TAKEN: "NAME_TAKEN",
  REGISTRATION_CLOSED: "REGISTRATION_CLOSED",
  NOT_ADMIN: "NOT_ADMIN",
  NOT_ORGANISER: "NOT_ORGANISER",
  UNKNOWN_KEY: "UNKNOWN_KEY",
  TOURNAMENT_NOT_FOUND: "TOURNAMENT_NOT_FOUND",
  TOURNAMENT_STATE: "TOURNAMENT_STATE",
  CONSENT_REQUIRED: "CONSENT_REQUIRED",
  NOT_INVITED: "NOT_INVITED",
  NOT_CHALLENGER: "NOT_CHALLENGER",
  CHALLENGE_NOT_FOUND: "CHALLENGE_NOT_FOUND",
  CHALLENGE_CLOSED: "CHALLENGE_CLOSED",
  CHALLENGE_EXPIRED: "CHALLENGE_EXPIRED",
  ALREADY_SEATED: "ALREADY_SEATED",
  SEAT_NOT_OPEN: "SEAT_NOT_OPEN",
  CHALLENGER_DECLINES: "CHALLENGER_DECLINES",
  TOO_MANY_CHALLENGES: "TOO_MANY_CHALLENGES",
  RESOURCE_EXHAUSTED: "RESOURCE_EXHAUSTED",
  BOTS_BUSY: "BOTS_BUSY",
  REGISTRATION_RATE: "REGISTRATION_RATE",
  SHUTTING_DOWN: "SHUTTING_DOWN",
  STORAGE_UNAVAILABLE: "STORAGE_UNAVAILABLE",
  CORRUPT_GAME: "CORRUPT_GAME",
  INTERNAL: "INTERNAL",
} as const;

/** One of the server's reasons. */
export type Reason = (typeof Reason)[keyof typeof Reason];

/** google.rpc.ErrorInfo as Connect-ES decodes it. */
interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

function stringField(name: string, number: number) {
  return {
    name,
    number,
    jsonName: name,
    type: FieldDescriptorProto_Type.STRING,
    label: FieldDescriptorProto_Label.OPTIONAL,
  };
}

/** The descriptor of google.rpc.ErrorInfo:
 * `string reason = 1; string domain = 2; map<string, string> metadata = 3;` */
export const ErrorInfoSchema: DescMessage = (() => {
  const file = create(FileDescriptorProtoSchema, {
    name: "google/rpc/error_details.proto",
    package: "google.rpc",
    syntax: "proto3",
    messageType: [
      {
        name: "ErrorInfo",
        field: [
          stringField("reason", 1),
          stringField("domain", 2),
          {
            name: "metadata",
            number: 3,
            jsonName: "metadata",
            type: FieldDescriptorProto_Type.MESSAGE,
            label: FieldDescriptorProto_Label.REPEATED,
            typeName: ".google.rpc.ErrorInfo.MetadataEntry",
          },
        ],
        nestedType: [
          {
            name: "MetadataEntry",
            field: [stringField("key", 1), stringField("value", 2)],
            options: { mapEntry: true },
          },
        ],
      },
    ],
  });
  const info = createFileRegistry(file, () => undefined).getMessage("google.rpc.ErrorInfo");
  if (info === undefined) throw new Error("google.rpc.ErrorInfo: the descriptor did not build");
  return info;
})();

/** The gRPC name of a code, as the docs and other languages spell it
 * ("FAILED_PRECONDITION"); Connect-ES's enum says `FailedPrecondition`. */
export function grpcCodeName(code: Code): string {
  if (code === Code.Canceled) return "CANCELLED";
  const name = Code[code];
  if (name === undefined) return `CODE_${code}`;
  return name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/** A call that the server (or the transport) rejected.
 *
 * `reason` is the ErrorInfo reason ("BAD_TOKEN", "STALE_VERSION",
 * "RULE_VIOLATION", "OUT_OF_TIME", ...: see the top of this file);
 * undefined when the error came without one (a
 * transport failure, a proxy), when `message` is all there is. */
export class GameError extends Error {
  override readonly name = "GameError";

  constructor(
    readonly code: Code,
    /** The server's message, for people: branch on `reason` instead. */
    readonly rawMessage: string,
    readonly reason?: string,
    readonly metadata: Readonly<Record<string, string>> = {},
    readonly domain?: string,
    options?: { cause?: unknown },
  ) {
    super(describe(code, rawMessage, reason, metadata), options);
  }

  /** The gRPC name of `code`, e.g. "ABORTED". */
  get codeName(): string {
    return grpcCodeName(this.code);
  }

  /** The rule id of docs/rules.md that a RULE_VIOLATION names (and T-4
   * for OUT_OF_TIME). */
  get rule(): string | undefined {
    return this.metadata["rule"];
  }

  /** Reads the code, the message and the first ErrorInfo of any error a
   * Connect-ES call throws (a GameError is returned as it is). */
  static from(error: unknown): GameError {
    if (error instanceof GameError) return error;
    const connect = ConnectError.from(error);
    // Details that do not decode are dropped: the code and message stand.
    let info: ErrorInfo | undefined;
    try {
      info = connect.findDetails(ErrorInfoSchema)[0] as ErrorInfo | undefined;
    } catch {
      info = undefined;
    }
    if (info === undefined) {
      // HTTP/2 REFUSED_STREAM (a server going away refuses the streams it
      // will not serve) guarantees the request was not processed: the call
      // may be sent again, as after UNAVAILABLE.
      const code =
        connect.code === Code.Internal && connect.rawMessage.includes("REFUSED_STREAM")
          ? Code.Unavailable
          : connect.code;
      return new GameError(code, connect.rawMessage, undefined, {}, undefined, { cause: error });
    }
    return new GameError(connect.code, connect.rawMessage, info.reason, { ...info.metadata }, info.domain, {
      cause: error,
    });
  }
}

function describe(
  code: Code,
  message: string,
  reason: string | undefined,
  metadata: Readonly<Record<string, string>>,
): string {
  const why = reason ? ` ${reason}` : "";
  const extra = Object.keys(metadata)
    .sort()
    .map((k) => ` ${k}=${metadata[k]}`)
    .join("");
  return `${grpcCodeName(code)}${why}: ${message}${extra}`;
}
