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
//
// Registered players and tournaments (PlayerService, TournamentService):
// `registerPlayer` (the API key is shown once), `getPlayer`, `setOrganiser`
// (with the server's admin key), `leaderboard`, `ratingHistory`,
// `watchPlayer` (the player's one stream, resumed by position: players.ts),
// and `createTournament` (with an organiser's key), `getTournament`,
// `listTournaments`, `standings`, `watchTournament`, `withdrawPlayer`,
// `exportTournamentArchive`. A registered player's key is its token in
// every game where a seat is its own; registered.ts plays all of a
// player's decisions from its stream.
//
// Consent (ChallengeService): no game seats a registered player who did
// not agree. `createGame` seats at most its caller (with `key`);
// registered players meet in a game through a challenge:
// `createChallenge` (with the challenger's key: named players' seats, open
// seats, bots' seats), `getChallenge`, `listChallenges`,
// `acceptChallenge`, `declineChallenge`, `cancelChallenge`. Rated games
// come from challenges and tournaments only.

import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, createClient, type CallOptions, type Client, type Transport } from "@connectrpc/connect";
import { GameError } from "./errors.js";
import {
  ChallengeService,
  DecisionKind,
  Expansion,
  GameService,
  GameView,
  PlayerService,
  RatingPool,
  TimeoutRule,
  TournamentFormat,
  TournamentService,
  WatchService,
  type Action,
  type ActionSchema,
  type ActResponse,
  type Challenge,
  type ChallengeSeatSchema,
  type Game,
  type LeaderboardEntry,
  type ListGamesResponse,
  type ListTournamentsResponse,
  type GameStatus,
  type PendingDecision,
  type RatingChange,
  type RegisteredPlayer,
  type RuleOptionsSchema,
  type Standings,
  type TileCount,
  type TimeControlSchema,
  type Tournament,
  type WatchGameResponse,
  type WatchTournamentResponse,
} from "./pb.js";
import { authorization, backoffMs, DEFAULT_RETRY, sleep, type RetryPolicy } from "./call.js";
import { PlayerStream, type PlayerWatchOptions } from "./players.js";
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
   * first answer, tokens included (for an id of 16 characters or more, at
   * any time); a fresh random one by default. */
  requestId?: string;
  /** Spectators see a running game this many events behind. */
  spectatorDelay?: number;
  /** A custom bag of land tiles (kinds A to X). */
  tiles?: { kind: string; count: number }[] | TileCount[];
  /** Clocks (see `timeControl`); unset: no clock runs. */
  timeControl?: MessageInitShape<typeof TimeControlSchema>;
  /** Seats the caller only: empty, or one entry per seat, in seat order:
   * "" for a guest seat (with a token of its own) and, for at most one
   * seat, the caller's own "players/{name}" (or the bare name), whose API
   * `key` the call sends (it is then that seat's token: no token is made
   * for it). Naming any other registered player, or a player without
   * their key, is PERMISSION_DENIED / CONSENT_REQUIRED: other registered
   * players agree to a game through a challenge (`createChallenge`). */
  accounts?: string[];
  /** The caller's API key, for the caller's own seat in `accounts`. */
  key?: string;
  /** Always refused (PERMISSION_DENIED / CONSENT_REQUIRED): a game is rated
   * only through a challenge or a tournament. */
  rated?: boolean;
}

/** A challenge's seat: a registered player's name ("players/{name}" or
 * bare) for that player's seat, `{ open: true }` for a seat any registered
 * player may take (a seek), `{ bot: "greedy" }` for a built-in bot's. */
export type ChallengeSeatInit = string | MessageInitShape<typeof ChallengeSeatSchema>;

/** Options of `createChallenge`; unset fields take the server's defaults. */
export interface CreateChallengeOptions {
  /** The game's rule options. */
  rules?: MessageInitShape<typeof RuleOptionsSchema>;
  /** The game's clocks (see `timeControl`); unset: no clock runs. */
  timeControl?: MessageInitShape<typeof TimeControlSchema>;
  /** Spectators see the running game this many events behind. */
  spectatorDelay?: number;
  /** The game changes its players' ratings: only without bot seats. */
  rated?: boolean;
  /** How long the offer stands, 10000 (10 s) to 604800000 (7 days); an
   * hour by default. */
  expireMs?: number;
  /** 16 to 128 characters; names the challenge, so a retry never makes a
   * second one. A fresh random one by default. */
  requestId?: string;
}

/** A new game and its seat tokens, which the server shows only once. */
export interface CreatedGame {
  name: string;
  game: Game;
  /** tokens[seat] acts (and reads) for that seat; "" for a registered
   * player's seat, whose token is the player's API key. */
  tokens: string[];
}

/** A player just registered, and its API key: shown only this once (the
 * server keeps its hash). The key is the player's token in every game where
 * a seat is its own, and opens its stream (`watchPlayer`). */
export interface Registration {
  /** "players/{name}". */
  name: string;
  player: RegisteredPlayer;
  apiKey: string;
}

/** Options of `createTournament`; unset fields take the server's defaults. */
export interface CreateTournamentOptions {
  /** The time control of every game: required, so that every game ends. */
  timeControl: MessageInitShape<typeof TimeControlSchema>;
  /** A title for people (1 to 100 characters); "Tournament" by default. */
  title?: string;
  /** "swiss" (the default: `rounds` rounds) or "round_robin". */
  format?: "swiss" | "round_robin";
  /** Swiss: the number of rounds (1 to participants - 1). */
  rounds?: number;
  /** Players per table, 2 to 5 (2 by default). */
  tableSize?: number;
  /** Points by place, as many as the table size, never increasing;
   * default 1, 0 for duels, 5, 3, 2, 1, 0 cut to the table size otherwise. */
  tablePoints?: number[];
  /** Games each table plays, 1 to 10 (1 by default). */
  gamesPerMatch?: number;
  /** Every table of a round draws the same tiles. */
  duplicateBags?: boolean;
  /** The games change the players' ratings. */
  rated?: boolean;
  /** The rule options of every game. */
  rules?: MessageInitShape<typeof RuleOptionsSchema>;
  /** House bots: built-in bots taking part beside the participants, a level
   * each ("random", "greedy", "search", "search:N"; else INVALID_ARGUMENT /
   * UNKNOWN_BOT_LEVEL), named "greedy bot 1" and so on, played by the
   * server and never rated. */
  houseBots?: string[];
  /** 16 to 128 characters; names the tournament, so a retry never creates
   * a second one. A fresh random one by default. */
  requestId?: string;
}

/** "players/Ada" from "Ada" or "players/Ada" (and so for tournaments and
 * challenges). */
function named(collection: "players" | "tournaments" | "challenges", name: string): string {
  return name.startsWith(`${collection}/`) ? name : `${collection}/${name}`;
}

/** A challenge's seat: a player's name is that player's seat. */
function challengeSeat(seat: ChallengeSeatInit): MessageInitShape<typeof ChallengeSeatSchema> {
  return typeof seat === "string" ? { player: named("players", seat) } : seat;
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
  readonly players: Client<typeof PlayerService>;
  readonly tournaments: Client<typeof TournamentService>;
  readonly challenges: Client<typeof ChallengeService>;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;

  constructor(
    readonly transport: Transport,
    options: ClientOptions = {},
  ) {
    this.games = createClient(GameService, transport);
    this.watcher = createClient(WatchService, transport);
    this.players = createClient(PlayerService, transport);
    this.tournaments = createClient(TournamentService, transport);
    this.challenges = createClient(ChallengeService, transport);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  /** Creates a game for 2 to 5 players (names in seat order). It never
   * creates a second game: the request id names it. A registered player
   * takes a seat only as its caller (`accounts` with `key`); see
   * CreateGameOptions. */
  async createGame(players: string[], options: CreateGameOptions = {}): Promise<CreatedGame> {
    const request = {
      requestId: options.requestId ?? newRequestId(),
      players,
      seed: options.seed ?? "",
      spectatorDelay: options.spectatorDelay ?? 0,
      tiles: options.tiles ?? [],
      accounts: (options.accounts ?? []).map((a) => (a ? named("players", a) : "")),
      rated: options.rated ?? false,
      ...(options.rules ? { rules: options.rules } : {}),
      ...(options.timeControl ? { timeControl: options.timeControl } : {}),
    };
    const response = await this.call((call) => this.games.createGame(request, call), options.key);
    const game = required(response.game, "CreateGame answered no game");
    const bySeat = new Map(response.tokens.map((t) => [t.seat, t.token]));
    const tokens = game.players.map((_, seat) => bySeat.get(seat) ?? "");
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

  // Registered players (PlayerService).

  /** Registers `name` (1 to 32 characters of A-Z a-z 0-9 _ -, unique
   * regardless of case; else ALREADY_EXISTS / NAME_TAKEN) and returns the
   * player with its API key, shown only this once. A server started with
   * `--registration admin` registers only with its `adminKey` (else
   * PERMISSION_DENIED / REGISTRATION_CLOSED). Not retried: a lost answer
   * cannot be asked for again (the retry would say NAME_TAKEN). */
  async registerPlayer(name: string, options: { adminKey?: string } = {}): Promise<Registration> {
    const response = await this.call(
      (call) => this.players.registerPlayer({ name }, call),
      options.adminKey,
      false,
    );
    const player = required(response.player, "RegisterPlayer answered no player");
    return { name: player.name, player, apiKey: response.apiKey };
  }

  /** The player "players/{name}" (or the bare name): whether an organiser,
   * and its ratings (NOT_FOUND / PLAYER_NOT_FOUND). */
  async getPlayer(name: string): Promise<RegisteredPlayer> {
    const response = await this.call((call) =>
      this.players.getPlayer({ name: named("players", name) }, call),
    );
    return required(response.player, "GetPlayer answered no player");
  }

  /** Makes the player an organiser (or not): only with the server's admin
   * key (else PERMISSION_DENIED / NOT_ADMIN). */
  async setOrganiser(name: string, adminKey: string, organiser = true): Promise<RegisteredPlayer> {
    const request = { name: named("players", name), organiser };
    const response = await this.call((call) => this.players.setOrganiser(request, call), adminKey);
    return required(response.player, "SetOrganiser answered no player");
  }

  /** The players of a rating pool ("duel": Glicko-2, 2 players;
   * "multiplayer": Weng-Lin, 3 to 5), best first; at most `limit` (1 to
   * 1000; 100 by default). */
  async leaderboard(
    pool: "duel" | "multiplayer" = "duel",
    options: { limit?: number } = {},
  ): Promise<LeaderboardEntry[]> {
    if (pool !== "duel" && pool !== "multiplayer") {
      throw new RangeError(`pool: "duel" or "multiplayer", not ${JSON.stringify(pool)}`);
    }
    const request = {
      pool: pool === "duel" ? RatingPool.DUEL : RatingPool.MULTIPLAYER,
      limit: options.limit ?? 0,
    };
    return (await this.call((call) => this.players.getLeaderboard(request, call))).entries;
  }

  /** Every rating change of the player, oldest first: one per rated game,
   * with its pool and the rating before and after. */
  async ratingHistory(name: string): Promise<RatingChange[]> {
    const request = { name: named("players", name) };
    return (await this.call((call) => this.players.getRatingHistory(request, call))).changes;
  }

  /** The player's own stream (WatchPlayer, with its API `key`): the games
   * that start with the player in a seat, every decision that becomes the
   * player's (with its legal actions and clocks), the games that end, the
   * tournament rounds that seat the player, the challenges the player made
   * or is named in (as they stand after each change), and keep-alives. It reopens by
   * itself after a dropped connection, from the last position seen, so
   * that no message is lost or repeated (see players.ts). */
  watchPlayer(key: string, options: PlayerWatchOptions = {}): PlayerStream {
    return new PlayerStream(this.players, key, { ...options, retry: options.retry ?? this.retry });
  }

  // Tournaments (TournamentService).

  /** Creates and starts a tournament of registered players (2 to 256,
   * "players/{name}" or bare names), with an organiser's key (else
   * PERMISSION_DENIED / NOT_ORGANISER). The server pairs each round,
   * creates its games and tells the players through their streams. Returns
   * the tournament with its first round paired. */
  async createTournament(
    organiserKey: string,
    participants: string[],
    options: CreateTournamentOptions,
  ): Promise<Tournament> {
    const format = options.format ?? "swiss";
    if (format !== "swiss" && format !== "round_robin") {
      throw new RangeError(`format: "swiss" or "round_robin", not ${JSON.stringify(format)}`);
    }
    const request = {
      requestId: options.requestId ?? newRequestId(),
      title: options.title ?? "Tournament",
      participants: participants.map((p) => named("players", p)),
      format: format === "swiss" ? TournamentFormat.SWISS : TournamentFormat.ROUND_ROBIN,
      rounds: options.rounds ?? 0,
      tableSize: options.tableSize ?? 0,
      tablePoints: options.tablePoints ?? [],
      gamesPerMatch: options.gamesPerMatch ?? 0,
      duplicateBags: options.duplicateBags ?? false,
      rated: options.rated ?? false,
      timeControl: options.timeControl,
      ...(options.rules ? { rules: options.rules } : {}),
      houseBots: options.houseBots ?? [],
    };
    const response = await this.call(
      (call) => this.tournaments.createTournament(request, call),
      organiserKey,
    );
    return required(response.tournament, "CreateTournament answered no tournament");
  }

  /** The tournament "tournaments/{id}": its settings, the rounds paired so
   * far with their games and results (NOT_FOUND / TOURNAMENT_NOT_FOUND). */
  async getTournament(name: string): Promise<Tournament> {
    const request = { name: named("tournaments", name) };
    const response = await this.call((call) => this.tournaments.getTournament(request, call));
    return required(response.tournament, "GetTournament answered no tournament");
  }

  /** One page of tournaments in the order of their names (`pageSize` 1 to
   * 100, 20 by default); pass `nextPageToken` on until it is empty. */
  async listTournaments(
    options: { pageSize?: number; pageToken?: string } = {},
  ): Promise<ListTournamentsResponse> {
    return this.call((call) => this.tournaments.listTournaments(options, call));
  }

  /** Every tournament, page after page. */
  async *allTournaments(options: { pageSize?: number } = {}): AsyncGenerator<Tournament, void, undefined> {
    let pageToken = "";
    do {
      const page = await this.listTournaments({ ...options, pageToken });
      yield* page.tournaments;
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
  }

  /** The tournament's standings now (`final` once it is over). */
  async standings(name: string): Promise<Standings> {
    const request = { name: named("tournaments", name) };
    const response = await this.call((call) => this.tournaments.getStandings(request, call));
    return required(response.standings, "GetStandings answered no standings");
  }

  /** The tournament and its standings now, then again after every change
   * (a round paired, a game ended, a withdrawal, the end), until it
   * finishes: the last message has the final standings. Each message is the
   * whole state, so after a failure (a GameError) call it again. */
  async *watchTournament(
    name: string,
    options: { signal?: AbortSignal } = {},
  ): AsyncGenerator<WatchTournamentResponse, void, undefined> {
    // A caller that stops reading (breaks out of its loop) ends the call.
    const controller = new AbortController();
    const forward = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", forward, { once: true });
    if (options.signal?.aborted) controller.abort(options.signal.reason);
    try {
      yield* this.tournaments.watchTournament(
        { name: named("tournaments", name) },
        { signal: controller.signal },
      );
    } catch (error) {
      throw GameError.from(error);
    } finally {
      options.signal?.removeEventListener("abort", forward);
      controller.abort();
    }
  }

  /** Withdraws `player` from the tournament: never paired again, and the
   * seats of its running games resign. Only the tournament's organiser may
   * (else PERMISSION_DENIED / NOT_ORGANISER); withdrawing twice, or from a
   * finished tournament, is FAILED_PRECONDITION / TOURNAMENT_STATE. Not
   * retried (a retry of a withdrawal that was done would say
   * TOURNAMENT_STATE). */
  async withdrawPlayer(name: string, player: string, organiserKey: string): Promise<Tournament> {
    const request = { name: named("tournaments", name), player: named("players", player) };
    const response = await this.call(
      (call) => this.tournaments.withdrawPlayer(request, call),
      organiserKey,
      false,
    );
    return required(response.tournament, "WithdrawPlayer answered no tournament");
  }

  /** A finished tournament's signed archive (a tar file, see
   * docs/archive-format.md): every game's files, the tournament's event
   * log, its standings and the ratings it led to, signed by the server's
   * key; the stream's chunks, joined. A running tournament is
   * FAILED_PRECONDITION / TOURNAMENT_STATE. */
  async exportTournamentArchive(name: string): Promise<Uint8Array> {
    const request = { name: named("tournaments", name) };
    return this.call(async (call) => {
      const chunks: Uint8Array[] = [];
      for await (const response of this.tournaments.exportTournamentArchive(request, call)) {
        chunks.push(response.chunk);
      }
      const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, at);
        at += chunk.length;
      }
      return bytes;
    });
  }

  // Challenges (ChallengeService): how registered players agree to a game.

  /** Offers a game, as the player whose API `key` is sent (the
   * challenger). `seats`, 2 to 5 in seat order: a registered player's name
   * for a seat that player accepts (the challenger's own among them, taken
   * from the start), `{ open: true }` for a seat any registered player may
   * take (a seek), `{ bot: "greedy" }` for a built-in bot's. Resolves with
   * the challenge, OPEN until every seat is taken (ACCEPTED at once, its
   * `game` started, when the challenger and bots are all the seats). The
   * players named are told through their streams (a `challenge` message).
   * Refusals: PLAYER_NOT_FOUND, INVALID_ARGUMENT, TOO_MANY_CHALLENGES (16
   * open per challenger). Retried like any call: the request id names the
   * challenge. */
  async createChallenge(
    key: string,
    seats: ChallengeSeatInit[],
    options: CreateChallengeOptions = {},
  ): Promise<Challenge> {
    const request = {
      requestId: options.requestId ?? newRequestId(),
      seats: seats.map(challengeSeat),
      spectatorDelay: options.spectatorDelay ?? 0,
      rated: options.rated ?? false,
      expireMs: options.expireMs ?? 0,
      ...(options.rules ? { rules: options.rules } : {}),
      ...(options.timeControl ? { timeControl: options.timeControl } : {}),
    };
    const response = await this.call((call) => this.challenges.createChallenge(request, call), key);
    return required(response.challenge, "CreateChallenge answered no challenge");
  }

  /** The challenge "challenges/{id}" (or the bare id) as it stands: its
   * seats and which are taken, its status, and `game` once it started
   * (NOT_FOUND / CHALLENGE_NOT_FOUND). */
  async getChallenge(name: string): Promise<Challenge> {
    const request = { name: named("challenges", name) };
    const response = await this.call((call) => this.challenges.getChallenge(request, call));
    return required(response.challenge, "GetChallenge answered no challenge");
  }

  /** The open challenges, oldest first: with a player's `key`, those the
   * player made or is named in, and every open seek; without one, the open
   * seeks. */
  async listChallenges(key?: string): Promise<Challenge[]> {
    return (await this.call((call) => this.challenges.listChallenges({}, call), key)).challenges;
  }

  /** Takes a seat of the challenge, as the player whose API `key` is sent:
   * the player's own named seat, or else an open one (`seat` picks which;
   * the first when unset). The acceptance that takes the last seat starts
   * the game: the answer is ACCEPTED and names it in `game`. Refusals:
   * NOT_INVITED (no seat for the caller), ALREADY_SEATED (the caller holds
   * a seat of it already, as the challenger does), SEAT_NOT_OPEN,
   * CHALLENGE_CLOSED, CHALLENGE_EXPIRED. Not retried: a retry of an
   * acceptance that was stored would say ALREADY_SEATED or
   * CHALLENGE_CLOSED. */
  async acceptChallenge(name: string, key: string, options: { seat?: number } = {}): Promise<Challenge> {
    const request = {
      name: named("challenges", name),
      ...(options.seat === undefined ? {} : { seat: options.seat }),
    };
    const response = await this.call((call) => this.challenges.acceptChallenge(request, call), key, false);
    return required(response.challenge, "AcceptChallenge answered no challenge");
  }

  /** Turns the game down, as a player named or seated in it (its API
   * `key`): the challenge is DECLINED and never starts. The challenger
   * cancels instead (CHALLENGER_DECLINES); anyone else is NOT_INVITED.
   * Not retried. */
  async declineChallenge(name: string, key: string): Promise<Challenge> {
    const request = { name: named("challenges", name) };
    const response = await this.call((call) => this.challenges.declineChallenge(request, call), key, false);
    return required(response.challenge, "DeclineChallenge answered no challenge");
  }

  /** Withdraws the offer, with the challenger's API `key` (anyone else:
   * NOT_CHALLENGER), while it is open (else CHALLENGE_CLOSED or
   * CHALLENGE_EXPIRED). Not retried. */
  async cancelChallenge(name: string, key: string): Promise<Challenge> {
    const request = { name: named("challenges", name) };
    const response = await this.call((call) => this.challenges.cancelChallenge(request, call), key, false);
    return required(response.challenge, "CancelChallenge answered no challenge");
  }

  /** Runs `send` with the deadline and the token's metadata, retrying
   * UNAVAILABLE per the policy (unless `retried` is false: a call whose
   * repetition would not get the first answer). `send` sends the same
   * request every time. */
  private async call<T>(
    send: (options: CallOptions) => Promise<T>,
    token?: string,
    retried = true,
  ): Promise<T> {
    const options: CallOptions = { timeoutMs: this.timeoutMs, headers: authorization(token) };
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(options);
      } catch (error) {
        const failure = GameError.from(error);
        if (!retried || failure.code !== Code.Unavailable || attempt >= this.retry.attempts) throw failure;
        await sleep(backoffMs(this.retry, attempt));
      }
    }
  }
}

function required<T>(value: T | undefined, message: string): T {
  if (value === undefined) throw new GameError(Code.Internal, message);
  return value;
}
