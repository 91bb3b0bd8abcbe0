// grpc-web against the real server, the way a web page talks to it:
// Connect-ES's grpc-web transport (@connectrpc/connect-web) over fetch and
// HTTP/1.1, with a fetch that behaves as a browser's does on a page of
// another origin (it sends Origin, refuses an answer without a matching
// access-control-allow-origin, and hides the response headers CORS does
// not expose).
//
// A failed call is answered "trailers-only": grpc-status, grpc-message and
// grpc-status-details-bin are HTTP response headers, which a page of
// another origin sees only if the server lists them in
// access-control-expose-headers; without them it would read
// "UNKNOWN: missing trailer" instead of the code and the reason.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { equals, toJsonString } from "@bufbuild/protobuf";
import { Code, GameError, pb, seededRandom, type GameClient } from "../src/index.js";
import { connectWeb } from "../src/web.js";
import { assertReason, rejection, seedOf } from "./support/games.js";
import { Server } from "./support/server.js";

const ORIGIN = "http://example.com";
// The CORS-safelisted response headers: a page may read them without
// access-control-expose-headers.
const SAFELISTED = [
  "cache-control",
  "content-language",
  "content-length",
  "content-type",
  "expires",
  "last-modified",
  "pragma",
];

let server: Server;
before(async () => {
  server = await Server.start();
});
after(async () => {
  await server.dispose();
});

/** A fetch that behaves as a browser's does for a page at `origin`. */
function browserFetch(origin: string): typeof fetch {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("origin", origin);
    const res = await fetch(input, { ...init, headers });
    const allow = res.headers.get("access-control-allow-origin");
    if (allow !== origin && allow !== "*") {
      throw new TypeError(`Failed to fetch: CORS: access-control-allow-origin is ${JSON.stringify(allow)}`);
    }
    const exposed = (res.headers.get("access-control-expose-headers") ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
    const visible = new Headers();
    for (const [k, v] of res.headers) {
      if (exposed.includes("*") || exposed.includes(k) || SAFELISTED.includes(k)) visible.append(k, v);
    }
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers: visible });
  };
}

/** A page's client: grpc-web with a browser's fetch on another origin. */
function pageClient(): GameClient {
  return connectWeb(server.url, { fetch: browserFetch(ORIGIN) });
}

test("the CORS preflight of a grpc-web POST from another origin is allowed", async () => {
  const res = await fetch(`${server.url}/carcassonne.v1.GameService/CreateGame`, {
    method: "OPTIONS",
    headers: {
      Origin: ORIGIN,
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type,x-grpc-web,x-user-agent,authorization",
    },
  });
  assert.ok(res.ok, `HTTP ${res.status}`);
  const allowOrigin = res.headers.get("access-control-allow-origin");
  assert.ok(allowOrigin === ORIGIN || allowOrigin === "*", `allow-origin ${allowOrigin}`);
  const methods = (res.headers.get("access-control-allow-methods") ?? "").toUpperCase();
  assert.ok(methods.includes("POST") || methods === "*", `allow-methods ${methods}`);
  const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase();
  for (const h of ["content-type", "x-grpc-web", "authorization"]) {
    assert.ok(
      allowed === "*" ||
        allowed
          .split(",")
          .map((x) => x.trim())
          .includes(h),
      `allow-headers ${allowed} lacks ${h}`,
    );
  }
});

test("errors reach a page with their code and ErrorInfo reason", async () => {
  for (const client of [connectWeb(server.url), pageClient()]) {
    const error = await rejection(() => client.getGame("games/no-such-game"));
    assertReason(error, Code.NotFound, "GAME_NOT_FOUND");
  }
  const client = pageClient();
  const created = await client.createGame(["Ada", "Bob"]);
  const legal = await client.legalActions(created.name, created.tokens[0]);
  const other = created.tokens[1 - legal.pending.seat]!;
  assertReason(
    await rejection(() => client.act(created.name, other, legal.version, legal.actions[0]!)),
    Code.PermissionDenied,
    "NOT_YOUR_TURN",
  );
});

test("a page watches a whole game over grpc-web: the snapshot, then exactly Act's events", async () => {
  const client = pageClient();
  const created = await client.createGame(["Ada", "Bob"], { seed: seedOf("grpc-web") });
  const { game } = created;
  // The generated client itself, as a page would use it.
  const stream = client.watcher.watchGame({ name: game.name, fromVersion: game.version, keepAliveMs: 1000 });
  const iterator = stream[Symbol.asyncIterator]();
  // No action before the snapshot has arrived.
  const first = await iterator.next();
  assert.equal(first.done, false);
  const snapshot = first.value.message;
  assert.equal(snapshot.case, "snapshot");
  assert.equal(snapshot.value.name, game.name);
  assert.equal(snapshot.value.version, game.version);
  const received: pb.WatchGameResponse[] = [];
  const reading = (async () => {
    for (let next = await iterator.next(); !next.done; next = await iterator.next())
      received.push(next.value);
  })();
  reading.catch(() => undefined); // awaited below; a failure meanwhile must not go unhandled

  // Each action one of GetLegalActions' list, with the pending seat's token.
  const random = seededRandom(7);
  const expected: { event: pb.GameEvent; game: pb.Game | undefined }[] = [];
  let reader = created.tokens[0]!;
  for (;;) {
    const legal = await client.legalActions(game.name, reader);
    if (legal.finished) break;
    const token = created.tokens[legal.pending.seat]!;
    const res = await client.act(
      game.name,
      token,
      legal.version,
      legal.actions[random(legal.actions.length)]!,
    );
    res.events.forEach((event, k) =>
      expected.push({ event, game: k === res.events.length - 1 ? res.game : undefined }),
    );
    reader = token;
  }
  // After the event that ends the game the stream closes, cleanly.
  await reading;

  const events: pb.WatchedEvent[] = [];
  for (const m of received) {
    if (m.message.case === "event") events.push(m.message.value);
    else assert.equal(m.message.case, "keepAlive", "nothing but events and keep-alives after the snapshot");
  }
  assert.equal(events.length, expected.length);
  events.forEach((w, i) => {
    const want = expected[i]!;
    assert.equal(
      w.event?.version,
      game.version + BigInt(i) + 1n,
      "versions one apart from the snapshot's on",
    );
    assert.ok(
      equals(pb.GameEventSchema, w.event!, want.event),
      `event ${i}: watched ${toJsonString(pb.GameEventSchema, w.event!)}, act ${toJsonString(pb.GameEventSchema, want.event)}`,
    );
    if (want.game) {
      // After an action's last event: its pending decision and scores are Act's game's.
      assert.ok(equals(pb.PendingDecisionSchema, w.pending!, want.game.pending!), `pending after event ${i}`);
      assert.deepEqual(
        w.scores,
        want.game.players.map((p) => p.score),
        `scores after event ${i}`,
      );
    }
  });
  assert.ok(events.at(-1)?.event?.finished, "the last event ends the game");
});

test("SIGTERM with a grpc-web stream open: the server exits 0 and the stream ends", async () => {
  const client = pageClient();
  const created = await client.createGame(["Ada", "Bob"]);
  const stream = client.watcher.watchGame({ name: created.name, keepAliveMs: 1000 });
  const iterator = stream[Symbol.asyncIterator]();
  assert.equal((await iterator.next()).value?.message.case, "snapshot");
  const ended = (async () => {
    try {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        assert.equal(next.value.message.case, "keepAlive");
      }
      return "closed";
    } catch (error) {
      return GameError.from(error).codeName;
    }
  })();
  assert.deepEqual(await server.stop(), { code: 0, signal: null });
  assert.match(await ended, /^(closed|UNAVAILABLE)$/);
});
