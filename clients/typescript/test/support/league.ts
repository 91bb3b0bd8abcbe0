// What the tests of registered players and tournaments share: a server
// with an admin key, games agreed through challenges, registered bots that
// play over their streams, and a reader of tar archives.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  pb,
  randomPolicy,
  RegisteredBot,
  seededRandom,
  type CreateChallengeOptions,
  type GameClient,
  type Registration,
} from "../../src/index.js";

/** The admin key of the servers these tests start: it makes organisers. */
export const ADMIN_KEY = "admin-key-of-the-typescript-client-tests-0123";

/** The repository (from dist/test/support/). */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../..");

/** A name of its own for each test: names live as long as the server. */
export function unique(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A new organiser's key. */
export async function organiser(client: GameClient): Promise<string> {
  const name = unique("Organiser");
  const { apiKey } = await client.registerPlayer(name);
  await client.setOrganiser(name, ADMIN_KEY);
  return apiKey;
}

/** A game of registered players, each in the seat of its place in
 * `players`, with everyone's consent: the first offers it (a challenge,
 * with its key), the others accept with theirs. The game's name. */
export async function agreedGame(
  client: GameClient,
  players: Registration[],
  options: CreateChallengeOptions = {},
): Promise<string> {
  const [challenger, ...others] = players;
  assert.ok(challenger, "a challenger");
  let challenge = await client.createChallenge(
    challenger.apiKey,
    players.map((p) => p.name),
    options,
  );
  for (const player of others) challenge = await client.acceptChallenge(challenge.name, player.apiKey);
  assert.equal(challenge.status, pb.ChallengeStatus.ACCEPTED);
  return challenge.game;
}

/** Registered bots, each running over a stream of its own. */
export class Bots {
  readonly bots: RegisteredBot[];
  readonly runs: Promise<unknown>[];
  readonly failures: unknown[] = [];

  constructor(
    readonly names: string[],
    keys: string[],
    client: GameClient,
  ) {
    this.bots = keys.map((key, i) => new RegisteredBot(client, key, randomPolicy(seededRandom(i + 1))));
    this.runs = this.bots.map((bot) => bot.run().catch((error: unknown) => this.failures.push(error)));
  }

  /** Registers `n` bots named `prefix{i}-...` and starts them; resolves once
   * every stream is open (rounds are told to the streams open when they are
   * paired). */
  static async start(client: GameClient, n: number, prefix = "Bot"): Promise<Bots> {
    const tag = randomUUID().slice(0, 6);
    const names = Array.from({ length: n }, (_, i) => `${prefix}${i}-${tag}`);
    const keys: string[] = [];
    for (const name of names) keys.push((await client.registerPlayer(name)).apiKey);
    const bots = new Bots(names, keys, client);
    await Promise.all(bots.bots.map((b) => b.listening));
    return bots;
  }

  async stop(): Promise<void> {
    for (const bot of this.bots) bot.stop();
    await Promise.all(this.runs);
  }
}

/** Resolves once `condition()` holds, polling; fails after `withinMs`. */
export async function waitFor(condition: () => boolean, what: string, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The names of the files of a tar archive (ustar), in order; fails on
 * anything that is not one. */
export function tarNames(bytes: Uint8Array): string[] {
  const text = (from: number, length: number) => {
    const field = bytes.subarray(from, from + length);
    const end = field.indexOf(0);
    return new TextDecoder().decode(end === -1 ? field : field.subarray(0, end));
  };
  const names: string[] = [];
  let at = 0;
  while (at + 512 <= bytes.length) {
    if (bytes.subarray(at, at + 512).every((b) => b === 0)) return names;
    assert.equal(text(at + 257, 5), "ustar", `a ustar header at ${at}`);
    const prefix = text(at + 345, 155);
    const name = text(at, 100);
    names.push(prefix ? `${prefix}/${name}` : name);
    const size = parseInt(text(at + 124, 12).trim(), 8);
    assert.ok(Number.isSafeInteger(size), `the size of ${name}`);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  assert.fail("the archive ends without its two empty blocks");
}

/** The bytes of the file `path` of a tar archive. */
export function tarFile(bytes: Uint8Array, path: string): Uint8Array {
  const text = (from: number, length: number) => {
    const field = bytes.subarray(from, from + length);
    const end = field.indexOf(0);
    return new TextDecoder().decode(end === -1 ? field : field.subarray(0, end));
  };
  let at = 0;
  while (at + 512 <= bytes.length && bytes[at] !== 0) {
    const prefix = text(at + 345, 155);
    const name = prefix ? `${prefix}/${text(at, 100)}` : text(at, 100);
    const size = parseInt(text(at + 124, 12).trim(), 8);
    if (name === path) return bytes.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  assert.fail(`no ${path} in the archive`);
}
