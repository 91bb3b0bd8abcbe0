// Playing a game to its end with random legal actions: the server lists
// every legal action of each decision, so a bot needs no rules.
//
// With a clock, the bot never lets a deadline pass needlessly: it answers
// at once, or after "thinking" (`thinkMs`, a pause) cut short so that the
// answer is sent at least `marginMs` (SAFETY_MARGIN_MS) before the
// decision's deadline by the server's estimated clock; a decision that
// comes with less left is answered at once.

import type { CreatedGame, GameClient, LegalActions } from "./client.js";
import { ServerClock } from "./clock.js";
import { sleep as pause } from "./call.js";
import { GameError } from "./errors.js";
import type { ActResponse, Game } from "./pb.js";

/** Far more decisions than any game has (about two per tile, plus the
 * Count's), so that a server that never ends a game fails the bot instead
 * of hanging it. */
export const MAX_STEPS = 10_000;

/** How long before a decision's deadline the bot sends its answer at the
 * latest (when it thinks at all). The client guide asks for "a second or
 * more": the answer must be stored, not sent, before the deadline. */
export const SAFETY_MARGIN_MS = 1000;

/** A seeded generator of integers in [0, n) (mulberry32): the same seed
 * picks the same actions. */
export function seededRandom(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return Math.floor(unit * n);
  };
}

export interface PlayOptions {
  /** Picks an index in [0, n): default Math.random. */
  random?: (n: number) => number;
  maxSteps?: number;
  /** Sees every answer to Act, with the events and score changes of each action. */
  onResponse?: (response: ActResponse) => void;
  /** Sees each decision before it is answered. */
  onDecision?: (legal: LegalActions) => void;
  /** Told of an answer the server refused as late (OUT_OF_TIME: it stored
   * the seat's timeout instead); the game then goes on as the server left
   * it. Without it, the error is thrown. */
  onLate?: (legal: LegalActions, error: GameError) => void;
  /** Think (pause) up to this long before each answer, cut short by the
   * margin (default 0: answer at once). */
  thinkMs?: number;
  /** Send each answer at least this long before its deadline (default
   * SAFETY_MARGIN_MS). */
  marginMs?: number;
  /** This seat resigns at its first decision after `after` actions of its
   * own (0: at its first decision), without thinking. */
  resign?: { seat: number; after: number };
  /** The server's clock, as estimated (default: a new ServerClock, which
   * learns from the bot's own actions). */
  clock?: ServerClock;
  /** How to wait (for tests). */
  sleep?: (ms: number) => Promise<void>;
}

/** How long to think before answering: `thinkMs`, cut so that the answer
 * leaves at least `marginMs` before `deadlineMs` (0: none). */
export function thinkingMs(
  thinkMs: number,
  deadlineMs: number,
  marginMs: number,
  clock: ServerClock,
): number {
  if (deadlineMs === 0) return thinkMs;
  return Math.max(0, Math.min(thinkMs, deadlineMs - marginMs - clock.nowMs()));
}

/** Plays `created` to its end, each decision by the seat it waits for,
 * with a random legal action; the final game (its `ending` says how it
 * ended) and the number of actions played. With a clock, answers are sent
 * at once or after thinking, at least the margin before their deadline
 * (see PlayOptions). Every read sends a seat's token, as a seat's program
 * does: without it, a game with a spectator delay would show an earlier
 * version. */
export async function playRandomGame(
  client: GameClient,
  created: CreatedGame,
  options: PlayOptions = {},
): Promise<{ game: Game; steps: number }> {
  const random = options.random ?? ((n: number) => Math.floor(Math.random() * n));
  const maxSteps = options.maxSteps ?? MAX_STEPS;
  const thinkMs = options.thinkMs ?? 0;
  const marginMs = options.marginMs ?? SAFETY_MARGIN_MS;
  const clock = options.clock ?? new ServerClock();
  const wait = options.sleep ?? ((ms: number) => pause(ms));
  const { name, tokens } = created;
  const tokenOf = (seat: number): string => {
    const token = tokens[seat];
    if (token === undefined) throw new Error(`${name}: no token for seat ${seat}`);
    return token;
  };
  let played = 0;
  const acted = new Map<number, number>();
  // Seat 0 decides first; then the seat the game waits for.
  let token = tokenOf(0);
  for (let step = 0; step < maxSteps; step++) {
    const legal = await client.legalActions(name, token);
    if (legal.finished) return { game: await client.getGame(name, token), steps: played };
    const seat = legal.pending.seat;
    token = tokenOf(seat);
    options.onDecision?.(legal);
    let action;
    if (
      options.resign !== undefined &&
      seat === options.resign.seat &&
      (acted.get(seat) ?? 0) >= options.resign.after
    ) {
      // Resigning needs no thought.
      action = { action: { case: "resign", value: {} } } as const;
    } else {
      action = legal.actions[random(legal.actions.length)];
      if (action === undefined) {
        throw new Error(`${name} at version ${legal.version} waits for a decision but lists no legal action`);
      }
      if (thinkMs > 0) await wait(thinkingMs(thinkMs, Number(legal.pending.deadlineMs), marginMs, clock));
    }
    const sent = clock.localMs();
    let response: ActResponse;
    try {
      response = await client.act(name, token, legal.version, action, { basic: true });
    } catch (error) {
      if (!(error instanceof GameError) || error.reason !== "OUT_OF_TIME" || options.onLate === undefined) {
        throw error;
      }
      options.onLate(legal, error);
      continue;
    }
    clock.observeAct(sent, response);
    played++;
    acted.set(seat, (acted.get(seat) ?? 0) + 1);
    options.onResponse?.(response);
  }
  throw new Error(`${name} did not end within ${maxSteps} actions`);
}
