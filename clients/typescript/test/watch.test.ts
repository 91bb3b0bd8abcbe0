// WatchGame through the wrapper against the real server: a live game to
// its end, resuming after `fell_behind` and after the server restarts,
// every event once and in order.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { equals } from "@bufbuild/protobuf";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  GameClient,
  pb,
  playRandomGame,
  seededRandom,
  type CreatedGame,
  type ResumeInfo,
  type WatchOptions,
} from "../src/index.js";
import { connect } from "../src/node.js";
import { sleep } from "../src/call.js";
import { seedOf } from "./support/games.js";
import { Server } from "./support/server.js";

let server: Server;
let client: GameClient;

before(async () => {
  server = await Server.start();
  client = connect(server.addr);
});
after(async () => {
  await server.stop();
  await server.dispose();
});

/** What a watcher received. */
interface Watched {
  snapshots: pb.Game[];
  events: pb.WatchedEvent[];
  other: string[];
}

async function collect(watch: AsyncIterable<pb.WatchGameResponse>): Promise<Watched> {
  const seen: Watched = { snapshots: [], events: [], other: [] };
  for await (const message of watch) {
    const body = message.message;
    if (body.case === "snapshot") seen.snapshots.push(body.value);
    else if (body.case === "event") seen.events.push(body.value);
    else if (body.case !== "keepAlive") seen.other.push(String(body.case));
  }
  return seen;
}

/** Plays `created` to its end; every event Act answered, in order. */
async function play(game: CreatedGame): Promise<pb.GameEvent[]> {
  const events: pb.GameEvent[] = [];
  const { game: final } = await playRandomGame(client, game, {
    random: seededRandom(7),
    onResponse: (response) => events.push(...response.events),
  });
  assert.equal(final.status, pb.GameStatus.FINISHED);
  return events;
}

/** The watched events are exactly `expected` (those after `from`), in order. */
function assertEvents(watched: Watched, from: bigint, expected: pb.GameEvent[]): void {
  assert.deepEqual(watched.other, [], "no fell_behind or empty message reaches the caller");
  assert.equal(watched.snapshots.length, 1, "one snapshot, even after resuming");
  assert.equal(watched.snapshots[0]?.version, from);
  const want = expected.filter((e) => e.version > from);
  assert.deepEqual(
    watched.events.map((e) => e.event?.version),
    want.map((e) => e.version),
    "every event once, in order",
  );
  watched.events.forEach((w, i) => {
    assert.ok(equals(pb.GameEventSchema, w.event!, want[i]!), `event ${w.event?.version} is Act's`);
  });
  assert.ok(watched.events.at(-1)?.event?.finished, "the last event ends the game");
}

test("a watcher follows a game live to its end", async () => {
  const created = await client.createGame(["Ada", "Bob", "Cy"], { seed: seedOf("watch-live") });
  const stream = client.watchGame(created.name, { token: created.tokens[0]!, keepAliveMs: 1000 });
  // No action before the snapshot has arrived.
  const first = await stream.next();
  assert.equal(first.done, false);
  const rest = collect({ [Symbol.asyncIterator]: () => stream });
  rest.catch(() => undefined); // awaited below; a failure meanwhile must not go unhandled
  const events = await play(created);
  const watched = await rest;
  watched.snapshots.unshift((first.value as pb.WatchGameResponse).message.value as pb.Game);
  assertEvents(watched, created.game.version, events);
  const last = watched.events.at(-1)!;
  assert.equal(last.pending?.kind, pb.DecisionKind.UNSPECIFIED);
});

test("a watcher that fell behind resumes from the version the server names", async () => {
  // A watcher on a connection with small HTTP/2 windows, which stops
  // reading after its snapshot while a long game (a bag of 500 tiles) is
  // played: the game does not wait for it, and its stream says fell_behind.
  const slow = new GameClient(
    createGrpcTransport({ baseUrl: server.url, nodeOptions: { settings: { initialWindowSize: 1024 } } }),
  );
  const tiles = "ABCDEFGHIJKLMNOPQRSTUVWX".split("").map((kind) => ({ kind, count: 21 }));
  const created = await client.createGame(["Ada", "Bob"], { tiles, seed: seedOf("watch-slow") });
  const resumes: ResumeInfo[] = [];
  const options: WatchOptions = {
    token: created.tokens[0]!,
    fromVersion: 2n,
    onResume: (r) => resumes.push(r),
  };
  const stream = slow.watchGame(created.name, options);
  const first = await stream.next();
  assert.equal(first.done, false);
  const events = await play(created);
  assert.ok(events.length > 1000, `a long game: ${events.length} events`);
  const watched = await collect({ [Symbol.asyncIterator]: () => stream });
  watched.snapshots.unshift((first.value as pb.WatchGameResponse).message.value as pb.Game);
  assertEvents(watched, 2n, events);
  const behind = resumes.filter((r) => r.why === "fell_behind");
  assert.ok(
    behind.length >= 1,
    `told it fell behind: ${JSON.stringify(resumes, (_, v) => (typeof v === "bigint" ? String(v) : v))}`,
  );
  assert.ok(behind[0]!.fromVersion! > 2n && behind[0]!.fromVersion! < events.at(-1)!.version);
});

for (const how of ["stopped", "killed"] as const) {
  test(`a watcher resumes after the server is ${how} and restarted, missing nothing`, async () => {
    const created = await client.createGame(["Ada", "Bob"], { seed: seedOf(`watch-${how}`) });
    const resumes: ResumeInfo[] = [];
    const watching = collect(
      client.watchGame(created.name, {
        token: created.tokens[0]!,
        onResume: (r) => resumes.push(r),
        retry: { attempts: 100, initialBackoffMs: 20, maxBackoffMs: 100 },
      }),
    );
    // Awaited at the end; a failure meanwhile must not go unhandled.
    watching.catch(() => undefined);
    await sleep(200);
    // A few actions, then the server goes away and comes back.
    const before: pb.GameEvent[] = [];
    for (let i = 0; i < 10; i++) {
      const legal = await client.legalActions(created.name, created.tokens[0]);
      const response = await client.act(
        created.name,
        created.tokens[legal.pending.seat]!,
        legal.version,
        legal.actions[0]!,
      );
      before.push(...response.events);
    }
    await sleep(200);
    if (how === "stopped") assert.deepEqual(await server.stop(), { code: 0, signal: null });
    else assert.equal((await server.kill()).signal, "SIGKILL");
    server = await server.restart();
    const events = [...before, ...(await play(created))];
    const watched = await watching;
    assertEvents(watched, created.game.version, events);
    assert.ok(
      resumes.length >= 1 && resumes.every((r) => r.why === "disconnected"),
      `resumed: ${resumes.length}`,
    );
    assert.equal(resumes[0]?.fromVersion, before.at(-1)?.version, "it resumes from the last version seen");
  });
}

test("a watcher of a finished game gets its snapshot and the stream ends, or its past from a version", async () => {
  const created = await client.createGame(["Ada", "Bob"], { seed: seedOf("watch-finished") });
  const events = await play(created);
  const watched = await collect(client.watchGame(created.name));
  assert.equal(watched.snapshots.length, 1);
  assert.equal(watched.snapshots[0]?.status, pb.GameStatus.FINISHED);
  assert.deepEqual(watched.events, []);
  // From a version of its past: the game then, and every event after it.
  assertEvents(await collect(client.watchGame(created.name, { fromVersion: 5n })), 5n, events);
});

test("without a token, the snapshot is the spectator delay behind", async () => {
  const created = await client.createGame(["Ada", "Bob"], { spectatorDelay: 3, seed: seedOf("watch-delay") });
  let version = created.game.version;
  for (let i = 0; i < 4; i++) {
    const legal = await client.legalActions(created.name, created.tokens[0]);
    version = (
      await client.act(created.name, created.tokens[legal.pending.seat]!, legal.version, legal.actions[0]!)
    ).version;
  }
  const stream = client.watchGame(created.name);
  const first = await stream.next();
  await stream.return();
  const snapshot = (first.value as pb.WatchGameResponse).message;
  assert.equal(snapshot.case, "snapshot");
  assert.equal((snapshot.value as pb.Game).version, version - 3n);
});
