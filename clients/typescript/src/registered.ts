// A registered player's bot: every decision of the player, in every game,
// over the player's one stream.
//
//   const bot = new RegisteredBot(client, apiKey, randomPolicy(seededRandom(7)));
//   const record = await bot.run();      // until bot.stop()
//
// The player's stream (WatchPlayer, see players.ts) brings each decision
// that becomes the player's with its legal actions: the bot asks its policy
// for one of them and sends it with Act, at that version, with the
// player's key. It acts once per (game, version). An answer that says the
// game has moved on (STALE_VERSION: another action came first; OUT_OF_TIME:
// the seat's clock ran out and the server stored the timeout;
// GAME_FINISHED) is no failure: the stream brings whatever comes next. The
// stream reopens by itself after a dropped connection, from the last
// position seen, so no decision is lost; the client retries a call that
// fails with UNAVAILABLE with the same request id, so an action is never
// stored twice.
//
// Challenges: a game with other registered players needs the player's
// consent. By default the bot leaves the challenges its stream tells of to
// a person (AcceptChallenge or DeclineChallenge with the key). With
// `acceptChallenges` it accepts the player's named seat of each open
// challenge it hears of (the stream's snapshot included), once per
// challenge, and then plays the game when it starts like any other. An
// answer that says the challenge moved on (CHALLENGE_CLOSED,
// CHALLENGE_EXPIRED, ALREADY_SEATED: the player holds its seat already, as
// the challenger always does) is no failure.

import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { GameClient, LegalActions } from "./client.js";
import { GameError } from "./errors.js";
import { backoffMs, sleep, type RetryPolicy } from "./call.js";
import { newRequestId } from "./client.js";
import {
  ChallengeStatus,
  DecisionKind,
  type ActionSchema,
  type Challenge,
  type Game,
  type PlayerDecision,
  type PlayerRoundPaired,
  type WatchPlayerResponse,
} from "./pb.js";
import type { PlayerResumeInfo, PlayerStream } from "./players.js";

/** The answers that mean "the game moved on without this action": not a
 * failure of the bot. */
export const MOVED_ON: ReadonlySet<string> = new Set(["STALE_VERSION", "OUT_OF_TIME", "GAME_FINISHED"]);

/** The answers to AcceptChallenge that mean "the challenge moved on without
 * this acceptance" (or needed none): not a failure of the bot. */
export const CHALLENGE_MOVED_ON: ReadonlySet<string> = new Set([
  "CHALLENGE_CLOSED",
  "CHALLENGE_EXPIRED",
  "ALREADY_SEATED",
]);

/** A decision of the player: answer it with one of `legal.actions`. */
export interface Decision {
  /** "games/{id}". */
  game: string;
  /** The player's seat in it. */
  seat: number;
  /** The version, the decision (with `pending.deadlineMs`) and the legal
   * actions. */
  legal: LegalActions;
  /** The stream's message, with the seats' clocks (`legal.timeLeftMs`). */
  message: PlayerDecision;
}

/** Chooses one of `decision.legal.actions` (or any action: resigning is
 * one). May take its time, within the decision's deadline. */
export type Policy = (
  decision: Decision,
) => MessageInitShape<typeof ActionSchema> | Promise<MessageInitShape<typeof ActionSchema>>;

/** A policy that picks a legal action at random: `random(n)` gives an
 * index in [0, n) (default Math.random; `seededRandom(seed)` replays). */
export function randomPolicy(random: (n: number) => number = (n) => Math.floor(Math.random() * n)): Policy {
  return (decision) => {
    const action = decision.legal.actions[random(decision.legal.actions.length)];
    if (action === undefined) throw new Error(`${decision.game}: no legal action to choose from`);
    return action;
  };
}

/** What a bot did and heard, as it goes. */
export interface BotRecord {
  /** Actions the server stored. */
  actions: number;
  /** Decisions answered, each "games/{id}@{version}" once. */
  decisions: Set<string>;
  /** Answers that said the game had moved on, by reason. */
  movedOn: Map<string, number>;
  /** Games the stream said started, in order. */
  started: string[];
  /** Games the stream said ended: the final game, by name. */
  ended: Map<string, Game>;
  /** Tournament rounds that seated the player (or gave it a bye). */
  rounds: PlayerRoundPaired[];
  /** Challenges whose seat the bot accepted, in order (`acceptChallenges`). */
  accepted: string[];
  /** Challenges the bot sent AcceptChallenge for, each once. */
  challenges: Set<string>;
}

export interface RegisteredBotOptions {
  /** Go on from a previous stream's position (see PlayerStream). */
  afterPosition?: bigint;
  /** The stream's keep-alive period (1000 to 300000; 15000 by default). */
  keepAliveMs?: number;
  /** Act's answers without the board (default true). */
  basic?: boolean;
  /** Accept the player's named seat of every open challenge the stream
   * tells of (default false: challenges are left to a person). */
  acceptChallenges?: boolean;
  /** The stream's reopenings in a row; the client's policy by default. */
  retry?: RetryPolicy;
  /** Aborting stops the bot: `run` rejects with a CANCELED GameError. */
  signal?: AbortSignal;
  /** Sees every message of the stream before the bot acts on it. */
  onMessage?: (message: WatchPlayerResponse) => void;
  /** Told of each reopening of the stream. */
  onResume?: (info: PlayerResumeInfo) => void;
}

/** Plays every decision of the player whose API key is `key` with
 * `policy`, in every game, across any number of games, until `stop()` (or
 * `run`'s own limits). One stream, reopened as needed. */
export class RegisteredBot {
  readonly record: BotRecord = {
    actions: 0,
    decisions: new Set(),
    movedOn: new Map(),
    started: [],
    ended: new Map(),
    rounds: [],
    accepted: [],
    challenges: new Set(),
  };
  readonly stream: PlayerStream;
  /** Resolves once the server has accepted the stream: from then on,
   * whatever concerns the player reaches the bot. */
  readonly listening: Promise<void>;
  private readonly basic: boolean;

  constructor(
    readonly client: GameClient,
    readonly key: string,
    readonly policy: Policy,
    readonly options: RegisteredBotOptions = {},
  ) {
    this.basic = options.basic ?? true;
    let opened: () => void = () => undefined;
    this.listening = new Promise((resolve) => {
      opened = resolve;
    });
    this.stream = client.watchPlayer(key, {
      ...(options.afterPosition === undefined ? {} : { afterPosition: options.afterPosition }),
      ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }),
      ...(options.retry === undefined ? {} : { retry: options.retry }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.onResume === undefined ? {} : { onResume: options.onResume }),
      onOpen: () => opened(),
    });
  }

  /** Plays until `stop()`, or once `games` of the player's games have
   * ended (as the stream tells), or once `until()` is true (checked after
   * each message; a keep-alive comes at least every `keepAliveMs`).
   * Resolves with the record. Rejects with a GameError when the stream is
   * refused (UNKNOWN_KEY), when an Act fails for another reason than the
   * game moving on (e.g. the policy chose an illegal action:
   * RULE_VIOLATION), when an AcceptChallenge fails for another reason than
   * the challenge moving on, or when the server stays away. */
  async run(limits: { games?: number; until?: () => boolean } = {}): Promise<BotRecord> {
    try {
      for await (const message of this.stream) {
        this.options.onMessage?.(message);
        await this.handle(message);
        if (limits.games !== undefined && this.record.ended.size >= limits.games) break;
        if (limits.until?.()) break;
      }
    } finally {
      this.stream.close();
    }
    return this.record;
  }

  /** Ends `run`: the stream closes. */
  stop(): void {
    this.stream.close();
  }

  /** The stream's last position: a later bot goes on from it
   * (`afterPosition`). */
  get position(): bigint {
    return this.stream.position;
  }

  private async handle(message: WatchPlayerResponse): Promise<void> {
    const body = message.message;
    switch (body.case) {
      case "decision":
        await this.decide(body.value);
        break;
      case "gameStarted":
        if (body.value.game) this.record.started.push(body.value.game.name);
        break;
      case "gameEnded":
        if (body.value.game) this.record.ended.set(body.value.game.name, body.value.game);
        break;
      case "roundPaired":
        this.record.rounds.push(body.value);
        break;
      case "challenge":
        if (this.options.acceptChallenges) await this.accept(body.value);
        break;
      default:
        break;
    }
  }

  /** Takes the player's named seat of an open challenge, once per
   * challenge. The bot does not know its player's name: the stream tells
   * only of challenges the player made, is named in or took a seat of, so
   * while a named seat waits, AcceptChallenge either takes the player's own
   * or says ALREADY_SEATED. It never takes an open seat: a seek is a
   * person's choice. */
  private async accept(challenge: Challenge): Promise<void> {
    if (challenge.status !== ChallengeStatus.OPEN || this.record.challenges.has(challenge.name)) return;
    if (!challenge.seats.some((seat) => seat.player !== "" && !seat.open && !seat.accepted)) return;
    this.record.challenges.add(challenge.name);
    // The client does not retry an acceptance; the bot does, since a retry
    // of one that was stored says ALREADY_SEATED or CHALLENGE_CLOSED: moved
    // on.
    const retry = this.options.retry ?? this.client.retry;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.acceptChallenge(challenge.name, this.key);
        this.record.accepted.push(challenge.name);
        return;
      } catch (error) {
        if (
          error instanceof GameError &&
          error.reason !== undefined &&
          CHALLENGE_MOVED_ON.has(error.reason)
        ) {
          this.record.movedOn.set(error.reason, (this.record.movedOn.get(error.reason) ?? 0) + 1);
          return;
        }
        const retried = error instanceof GameError && error.code === Code.Unavailable;
        if (!retried || attempt >= retry.attempts || this.stream.closed) throw error;
        await sleep(backoffMs(retry, attempt));
      }
    }
  }

  private async decide(message: PlayerDecision): Promise<void> {
    const legal = message.legal;
    if (legal === undefined || legal.actions.length === 0 || legal.pending === undefined) return;
    const done = `${message.game}@${legal.version}`;
    if (this.record.decisions.has(done)) return;
    this.record.decisions.add(done);
    const decision: Decision = {
      game: message.game,
      seat: message.seat,
      legal: {
        version: legal.version,
        pending: legal.pending,
        actions: legal.actions,
        finished: legal.pending.kind === DecisionKind.UNSPECIFIED,
      },
      message,
    };
    const action = await this.policy(decision);
    try {
      // The client retries UNAVAILABLE with this same request id.
      await this.client.act(message.game, this.key, legal.version, action, {
        requestId: newRequestId(),
        basic: this.basic,
      });
    } catch (error) {
      if (error instanceof GameError && error.reason !== undefined && MOVED_ON.has(error.reason)) {
        this.record.movedOn.set(error.reason, (this.record.movedOn.get(error.reason) ?? 0) + 1);
        return;
      }
      throw error;
    }
    this.record.actions++;
  }
}
