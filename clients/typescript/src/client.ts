// A thin, typed wrapper over the generated GameService and WatchService
// clients, for any Connect-ES transport (gRPC over HTTP/2 from Node, see
// node.ts; grpc-web from a browser, see web.ts).
//
// It adds what every program would otherwise repeat: the seat token in the
// metadata (of Act, and of every read given one: a seat's program reads its
// game with its token, or a game with a spectator delay shows it an earlier
// version), fresh request ids, a deadline on each call, retries of
// UNAVAILABLE with the same request (so the same request id: the server
// answers a retried Act or CreateGame with its first answer, never acting
// twice), a WatchGame that resumes, and one error type (GameError) with the
// server's ErrorInfo reason. Requests and answers stay the generated
// messages, so nothing of the API is hidden.
//
// Clocks: `timeControl` builds a game's time control for createGame;
// `resign` and `abort` end a game early; clock.ts reads a seat's time left.

import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, createClient, type CallOptions, type Client, type Transport } from "@connectrpc/connect";
import { GameError } from "./errors.js";
import {
  DecisionKind,
  Expansion,
  GameService,
  GameView,
  TimeoutRule,
  WatchService,
  type Action,
  type ActionSchema,
  type ActResponse,
  type Game,
  type ListGamesResponse,
  type GameStatus,
  type PendingDecision,
  type RuleOptionsSchema,
  type TileCount,
  type TimeControlSchema,
  type WatchGameResponse,
} from "./pb.js";
import { authorization, backoffMs, DEFAULT_RETRY, sleep, type RetryPolicy } from "./call.js";
import { watchGame, type WatchOptions } from "./watch.js";

/** Long enough for a call that waits on the store under load, short enough
 * that a hung server fails a bot or a test instead of stalling it. */
export const DEFAULT_TIMEOUT_MS = 30_000;

export interface ClientOptions {
  /** Deadline of each unary call (default DEFAULT_TIMEOUT_MS). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
}

/** A fresh id for CreateGame or Act: random (a CreateGame request id is a
 * secret, since its retry returns the tokens) and 32 characters (ids of 16
 * or more are kept for retries). */
export function newRequestId(): string {
  return globalThis.crypto.randomUUID().replaceAll("-", "");
}

/** Default rules with the given expansions. */
export function ruleOptions(
  expansions: { river?: boolean; count?: boolean } = {},
): MessageInitShape<typeof RuleOptionsSchema> {
  const list: Expansion[] = [];
  if (expansions.river) list.push(Expansion.RIVER);
  if (expansions.count) list.push(Expansion.COUNT);
  return { expansions: list };
}

/** Options of `timeControl`: milliseconds, 0 (or unset) for none. */
export interface TimeControlOptions {
  /** Each seat's main time (a chess clock). */
  mainMs?: number;
  /** Added to a seat's main time each time it hands the game over; only
   * with a main time. */
  incrementMs?: number;
  /** The most one decision may take. */
  decisionMs?: number;
  /** What a timeout does: the seat goes out ("forfeit", the default; with 2
   * players the other wins) or the server decides for it and the game goes
   * on ("auto"). */
  onTimeout?: "forfeit" | "auto";
}

/** A time control for createGame (docs/rules.md, T-1): a main time per
 * seat with an increment, a limit per decision, or both. The server
 * checks the numbers (INVALID_ARGUMENT, field "time_control...": at most
 * 30 days each, a main time or a limit, no increment without a main time).
 *
 *     timeControl({ mainMs: 300_000, incrementMs: 5_000 })   // 5 min + 5 s
 *     timeControl({ decisionMs: 86_400_000 })                // a day a move */
export function timeControl(options: TimeControlOptions): MessageInitShape<typeof TimeControlSchema> {
  const onTimeout = options.onTimeout ?? "forfeit";
  if (onTimeout !== "forfeit" && onTimeout !== "auto") {
    throw new RangeError(`onTimeout: "forfeit" or "auto", not ${JSON.stringify(onTimeout)}`);
  }
  return {
    mainMs: options.mainMs ?? 0,
    incrementMs: options.incrementMs ?? 0,
    decisionMs: options.decisionMs ?? 0,
    onTimeout: onTimeout === "auto" ? TimeoutRule.AUTO : TimeoutRule.FORFEIT,
  };
}

export interface CreateGameOptions {
  /** Rule options; unset fields take the defaults of docs/rules.md. */
  rules?: MessageInitShape<typeof RuleOptionsSchema>;
  /** 64 hex digits (32 bytes) fixing the draw order; the server picks one
   * when unset. */
  seed?: string;
  /** Also names the game. A retry with the same id and fields returns the
   * first answer, tokens included (for 10 minutes, while the server runs);
   * a fresh random one by default. */
  requestId?: string;
  /** Spectators see a running game this many events behind. */
  spectatorDelay?: number;
  /** A custom bag of land tiles (kinds A to X). */
  tiles?: { kind: string; count: number }[] | TileCount[];
  /** Clocks (see `timeControl`); unset: no clock runs. */
  timeControl?: MessageInitShape<typeof TimeControlSchema>;
}

/** A new game and its seat tokens, which the server shows only once. */
export interface CreatedGame {
  name: string;
  game: Game;
  /** tokens[seat] acts (and reads) for that seat. */
  tokens: string[];
}

/** The pending decision of a game and every legal answer to it. */
export interface LegalActions {
  /** The version the actions are legal at: send it as expectedVersion. */
  version: bigint;
  pending: PendingDecision;
  actions: Action[];
  /** No decision is pending: the game is over (a running game always has one). */
  finished: boolean;
}

export interface ActOptions {
  /** Pass the same id to retry a call whose answer was lost; fresh by default. */
  requestId?: string;
  /** An answer without the board (tiles, followers, bag, city): the scores,
   * the pending decision and the next legal actions are all a bot needs. */
  basic?: boolean;
}

export class GameClient {
  /** The generated clients, for what the wrapper leaves out. */
  readonly games: Client<typeof GameService>;
  readonly watcher: Client<typeof WatchService>;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;

  constructor(
    readonly transport: Transport,
    options: ClientOptions = {},
  ) {
    this.games = createClient(GameService, transport);
    this.watcher = createClient(WatchService, transport);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  /** Creates a game for 2 to 5 players (names in seat order). It never
   * creates a second game: the request id names it. */
  async createGame(players: string[], options: CreateGameOptions = {}): Promise<CreatedGame> {
    const request = {
      requestId: options.requestId ?? newRequestId(),
      players,
      seed: options.seed ?? "",
      spectatorDelay: options.spectatorDelay ?? 0,
      tiles: options.tiles ?? [],
      ...(options.rules ? { rules: options.rules } : {}),
      ...(options.timeControl ? { timeControl: options.timeControl } : {}),
    };
    const response = await this.call((call) => this.games.createGame(request, call));
    const game = required(response.game, "CreateGame answered no game");
    const tokens = [...response.tokens].sort((a, b) => a.seat - b.seat).map((t) => t.token);
    return { name: game.name, game, tokens };
  }

  /** The game "games/{id}": as it is now with a seat's token,
   * `spectatorDelay` events behind without one. */
  async getGame(name: string, token?: string): Promise<Game> {
    const response = await this.call((call) => this.games.getGame({ name }, call), token);
    return required(response.game, "GetGame answered no game");
  }

  /** The game as it was at `version` (from 1), as far as the caller may see. */
  async getGameAtVersion(name: string, version: bigint, token?: string): Promise<Game> {
    const response = await this.call((call) => this.watcher.getGameAtVersion({ name, version }, call), token);
    return required(response.game, "GetGameAtVersion answered no game");
  }

  /** One page of games, in the order of their names, as spectators see them. */
  async listGames(
    options: { status?: GameStatus; pageSize?: number; pageToken?: string } = {},
  ): Promise<ListGamesResponse> {
    return this.call((call) => this.games.listGames(options, call));
  }

  /** The pending decision, whose seat it is, and every legal action. A
   * seat's program passes its `token`: without one, a game with a spectator
   * delay is shown as it was that many events ago. */
  async legalActions(name: string, token?: string): Promise<LegalActions> {
    const response = await this.call((call) => this.games.getLegalActions({ name }, call), token);
    const pending = required(response.pending, "GetLegalActions answered no pending decision");
    return {
      version: response.version,
      pending,
      actions: response.actions,
      finished: pending.kind === DecisionKind.UNSPECIFIED,
    };
  }

  /** Plays `action` for the seat of `token`, if the game is still at
   * `expectedVersion` (else GameError ABORTED / STALE_VERSION, with the
   * current version in `metadata.version`). The answer comes once the
   * events are stored: the events (draws included) with their score
   * changes, the game after them and the next legal actions. */
  async act(
    name: string,
    token: string,
    expectedVersion: bigint,
    action: MessageInitShape<typeof ActionSchema>,
    options: ActOptions = {},
  ): Promise<ActResponse> {
    const request = {
      name,
      expectedVersion,
      requestId: options.requestId ?? newRequestId(),
      action,
      view: options.basic ? GameView.BASIC : GameView.FULL,
    };
    return this.call((call) => this.games.act(request, call), token);
  }

  /** The seat of `token` leaves the game (T-8), at any time, also while
   * another seat decides: `act` with `Action.resign`, so the same request
   * id and retries. `expectedVersion` is the game's version as the seat
   * last read it (else ABORTED / STALE_VERSION). With one seat left, the
   * game ends (ending RESIGNED) and that seat wins; with more, it goes on
   * without this one. */
  resign(
    name: string,
    token: string,
    expectedVersion: bigint,
    options: ActOptions = {},
  ): Promise<ActResponse> {
    return this.act(name, token, expectedVersion, { action: { case: "resign", value: {} } }, options);
  }

  /** Ends the game with no result (T-9: ending ABORTED, no ranking, no
   * winners): `act` with `Action.abort`, so the same request id and
   * retries. Only while some seat still in the game has had no decision of
   * its own; later, FAILED_PRECONDITION / RULE_VIOLATION with rule T-9. */
  abort(
    name: string,
    token: string,
    expectedVersion: bigint,
    options: ActOptions = {},
  ): Promise<ActResponse> {
    return this.act(name, token, expectedVersion, { action: { case: "abort", value: {} } }, options);
  }

  /** Follows a game live: a snapshot, then every event in order (and
   * keep-alives), resuming from the last version seen after a dropped
   * connection or `fell_behind`, until the game ends. See watch.ts. */
  watchGame(name: string, options: WatchOptions = {}): AsyncGenerator<WatchGameResponse, void, undefined> {
    return watchGame(this.watcher, name, { ...options, retry: options.retry ?? this.retry });
  }

  /** Runs `send` with the deadline and the token's metadata, retrying
   * UNAVAILABLE per the policy. `send` sends the same request every time. */
  private async call<T>(send: (options: CallOptions) => Promise<T>, token?: string): Promise<T> {
    const options: CallOptions = { timeoutMs: this.timeoutMs, headers: authorization(token) };
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(options);
      } catch (error) {
        const failure = GameError.from(error);
        if (failure.code !== Code.Unavailable || attempt >= this.retry.attempts) throw failure;
        await sleep(backoffMs(this.retry, attempt));
      }
    }
  }
}

function required<T>(value: T | undefined, message: string): T {
  if (value === undefined) throw new GameError(Code.Internal, message);
  return value;
}
