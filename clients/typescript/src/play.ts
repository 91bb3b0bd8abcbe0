// Playing a game to its end with random legal actions: the server lists
// every legal action of each decision, so a bot needs no rules.

import type { CreatedGame, GameClient } from "./client.js";
import type { ActResponse, Game } from "./pb.js";

/** Far more decisions than any game has (about two per tile, plus the
 * Count's), so that a server that never ends a game fails the bot instead
 * of hanging it. */
export const MAX_STEPS = 10_000;

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
}

/** Plays `created` to its end, each decision by the seat it waits for,
 * with a random legal action; the final game and the number of actions.
 * Every read sends a seat's token, as a seat's program does: without it, a
 * game with a spectator delay would show an earlier version. */
export async function playRandomGame(
  client: GameClient,
  created: CreatedGame,
  options: PlayOptions = {},
): Promise<{ game: Game; steps: number }> {
  const random = options.random ?? ((n: number) => Math.floor(Math.random() * n));
  const maxSteps = options.maxSteps ?? MAX_STEPS;
  const { name, tokens } = created;
  const tokenOf = (seat: number): string => {
    const token = tokens[seat];
    if (token === undefined) throw new Error(`${name}: no token for seat ${seat}`);
    return token;
  };
  // Seat 0 decides first; then the seat the game waits for.
  let token = tokenOf(0);
  for (let step = 0; step < maxSteps; step++) {
    const legal = await client.legalActions(name, token);
    if (legal.finished) return { game: await client.getGame(name, token), steps: step };
    const action = legal.actions[random(legal.actions.length)];
    if (action === undefined) {
      throw new Error(`${name} at version ${legal.version} waits for a decision but lists no legal action`);
    }
    token = tokenOf(legal.pending.seat);
    const response = await client.act(name, token, legal.version, action, { basic: true });
    options.onResponse?.(response);
  }
  throw new Error(`${name} did not end within ${maxSteps} actions`);
}
