// A grpc-web client against the real server, the way a browser talks to it:
// Connect-ES's grpc-web transport from @connectrpc/connect-web, over fetch
// and HTTP/1.1, with code generated from ../../proto (see buf.gen.yaml).
//
// It starts `carcassonne serve` on a free port with a temporary data dir,
// checks the CORS preflight, creates a two-player game, opens WatchGame on
// it, plays ACTIONS actions through Act (legal ones from GetLegalActions,
// each with the pending seat's token), and checks that the stream delivered
// the snapshot and then exactly the events the Act calls returned, in order,
// versions one apart. Then it sends SIGTERM with the stream still open and
// checks that the stream ends and that the server exits 0.
//
// Environment:
//   CARCASSONNE_BIN  the server binary (default ../../target/release/carcassonne)
//   ACTIONS          how many actions to play (default 10)
// A page on another origin must read an error's code, through the headers
// the server's CORS layer exposes.
// Exits 0 when every check passes, 1 with a message on the first failure.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { equals, toJsonString } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import {
  GameEventSchema,
  GameStatus,
  PendingDecisionSchema,
} from "./gen/carcassonne/v1/game_pb.js";
import { GameService } from "./gen/carcassonne/v1/game_service_pb.js";
import { WatchService } from "./gen/carcassonne/v1/watch_service_pb.js";

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.CARCASSONNE_BIN
  ? resolve(process.env.CARCASSONNE_BIN) // relative to the working directory
  : resolve(here, "../../target/release/carcassonne");
const ACTIONS = Number(process.env.ACTIONS ?? 10);
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
const STREAM_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = 120_000;
// A fixed seed (32 bytes, as 64 hex digits like every seed of the API), so
// that every run plays the same game.
const SEED = Array.from({ length: 32 }, (_, i) => (i + 1).toString(16).padStart(2, "0")).join("");

class TestFailure extends Error {}
function check(condition, message) {
  if (!condition) throw new TestFailure(message);
}
const log = (...args) => console.log("watch-test:", ...args);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const show = (schema, message) => toJsonString(schema, message);

// ---------------------------------------------------------------- server

/** `carcassonne serve --addr 127.0.0.1:0 --data <tmp>`; resolves once the
 * first stdout line, "listening on 127.0.0.1:PORT", is read. */
async function startServer(dataDir) {
  const child = spawn(
    BIN,
    ["serve", "--addr", "127.0.0.1:0", "--data", dataDir],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
  );
  const logLines = [];
  const remember = (line) => {
    logLines.push(line);
    if (logLines.length > 40) logLines.shift();
  };
  createInterface({ input: child.stderr }).on("line", remember);
  const exited = new Promise((res) =>
    child.on("exit", (code, signal) => res({ code, signal })),
  );
  const spawnError = new Promise((_, rej) =>
    child.on("error", (e) =>
      rej(new TestFailure(`cannot start the server ${BIN}: ${e.message}`)),
    ),
  );
  const stdout = createInterface({ input: child.stdout });
  const firstLine = new Promise((res) => {
    let first = true;
    stdout.on("line", (line) => {
      if (first) res(line);
      else remember(line);
      first = false;
    });
  });
  let timer;
  const line = await Promise.race([
    firstLine,
    spawnError,
    exited.then(({ code, signal }) => {
      throw new TestFailure(
        `the server exited (code ${code}, signal ${signal}) before listening`,
      );
    }),
    new Promise((_, rej) => {
      timer = setTimeout(
        () => rej(new TestFailure(`the server printed nothing in ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  const m = /^listening on (\S+):(\d+)$/.exec(line);
  check(m, `unexpected first stdout line of the server: ${JSON.stringify(line)}`);
  return { child, exited, logLines, host: m[1], port: Number(m[2]) };
}

/** Sends SIGTERM and waits for the exit; {code, signal}, or null on timeout. */
async function stopServer(server) {
  server.child.kill("SIGTERM");
  let timer;
  const result = await Promise.race([
    server.exited,
    new Promise((res) => {
      timer = setTimeout(() => res(null), STOP_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  return result;
}

// ---------------------------------------------------------------- checks

/** The preflight a browser sends before a grpc-web POST from another origin. */
async function checkCorsPreflight(baseUrl) {
  const origin = "http://example.com";
  const res = await fetch(`${baseUrl}/carcassonne.v1.GameService/CreateGame`, {
    method: "OPTIONS",
    headers: {
      Origin: origin,
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type,x-grpc-web,x-user-agent,authorization",
    },
  });
  const allowOrigin = res.headers.get("access-control-allow-origin");
  check(
    res.ok,
    `CORS preflight: HTTP ${res.status} ${res.statusText}, expected a 2xx answer`,
  );
  check(
    allowOrigin === origin || allowOrigin === "*",
    `CORS preflight: access-control-allow-origin is ${JSON.stringify(allowOrigin)}, ` +
      `expected ${JSON.stringify(origin)} or "*"`,
  );
  const allowMethods = (res.headers.get("access-control-allow-methods") ?? "").toUpperCase();
  check(
    allowMethods.includes("POST") || allowMethods === "*",
    `CORS preflight: access-control-allow-methods is ${JSON.stringify(allowMethods)}, ` +
      `expected it to allow POST`,
  );
  const allowHeaders = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase();
  for (const h of ["content-type", "x-grpc-web", "authorization"]) {
    check(
      allowHeaders === "*" || allowHeaders.split(",").map((x) => x.trim()).includes(h),
      `CORS preflight: access-control-allow-headers is ${JSON.stringify(allowHeaders)}, ` +
        `expected it to allow ${h}`,
    );
  }
  log(`CORS preflight ok (HTTP ${res.status}, allow-origin ${allowOrigin})`);
}

// Response headers a page may read from a cross-origin answer without
// access-control-expose-headers (the CORS-safelisted response headers).
const SAFELISTED = [
  "cache-control", "content-language", "content-length", "content-type",
  "expires", "last-modified", "pragma",
];

/** A fetch that behaves as a browser's does for a page at `origin`: it sends
 * the Origin header, rejects an answer without a matching
 * access-control-allow-origin, and hides the response headers that CORS
 * does not expose. */
function browserFetch(origin) {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("origin", origin);
    const res = await fetch(input, { ...init, headers });
    const allow = res.headers.get("access-control-allow-origin");
    if (allow !== origin && allow !== "*") {
      throw new TypeError(
        `Failed to fetch: CORS: access-control-allow-origin is ${JSON.stringify(allow)}`,
      );
    }
    const exposedList = (res.headers.get("access-control-expose-headers") ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
    const exposed = new Set([...SAFELISTED, ...exposedList]);
    const visible = new Headers();
    for (const [k, v] of res.headers) {
      if (exposedList.includes("*") || exposed.has(k)) visible.append(k, v);
    }
    return new Response(res.body, {
      status: res.status,
      statusText: res.statusText,
      headers: visible,
    });
  };
}

/** An error answer must reach the client with its code: GetGame of a game
 * that does not exist is NOT_FOUND. tonic answers errors "trailers-only",
 * with grpc-status in the HTTP headers, which a browser shows to the page
 * only if the server lists them in access-control-expose-headers. */
async function checkErrorStatus(games, label) {
  try {
    await games.getGame({ name: "games/no-such-game" });
  } catch (e) {
    const err = ConnectError.from(e);
    return { ok: err.code === Code.NotFound, got: `${Code[err.code]}: ${err.rawMessage}` };
  }
  throw new TestFailure(`${label}: GetGame of a missing game succeeded`);
}

/** Reads a WatchGame stream in the background into `messages`. */
function watch(watchClient, name, fromVersion) {
  const abort = new AbortController();
  const state = {
    messages: [],
    ended: false,
    error: null,
    abort,
    waiters: [],
  };
  const wake = () => {
    for (const w of state.waiters.splice(0)) w();
  };
  state.done = (async () => {
    try {
      for await (const msg of watchClient.watchGame(
        { name, fromVersion, keepAliveMs: 1000 },
        { signal: abort.signal },
      )) {
        state.messages.push(msg);
        wake();
      }
    } catch (e) {
      state.error = e;
    } finally {
      state.ended = true;
      wake();
    }
  })();
  /** Waits until `pred(state)` holds, or fails after STREAM_TIMEOUT_MS. */
  state.until = async (pred, what) => {
    const deadline = Date.now() + STREAM_TIMEOUT_MS;
    while (!pred(state)) {
      if (state.ended) {
        throw new TestFailure(
          `the watch stream ended while waiting for ${what}` +
            (state.error ? `: ${state.error.message}` : " (no error)"),
        );
      }
      const left = deadline - Date.now();
      check(left > 0, `no ${what} on the watch stream in ${STREAM_TIMEOUT_MS} ms`);
      await new Promise((res) => {
        const t = setTimeout(res, left);
        state.waiters.push(() => {
          clearTimeout(t);
          res();
        });
      });
    }
  };
  return state;
}

/** A small deterministic generator, so that runs pick the same actions. */
function rng(seed) {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}

// ---------------------------------------------------------------- the test

async function run(server) {
  const baseUrl = `http://${server.host}:${server.port}`;
  log(`server listening at ${baseUrl}`);
  await checkCorsPreflight(baseUrl);

  // What a web page does: createGrpcWebTransport({ baseUrl }), with the
  // fetch of a page served from another origin.
  const transport = createGrpcWebTransport({
    baseUrl,
    useBinaryFormat: true,
    fetch: browserFetch("http://example.com"),
  });
  const games = createClient(GameService, transport);
  const watcher = createClient(WatchService, transport);

  // Errors: with every response header visible (as a non-browser client
  // sees them) the code must come through; with the headers a browser
  // exposes, see checkErrorStatus.
  const plain = createClient(
    GameService,
    createGrpcWebTransport({ baseUrl, useBinaryFormat: true }),
  );
  const direct = await checkErrorStatus(plain, "grpc-web");
  check(direct.ok, `grpc-web error: expected NOT_FOUND, got ${direct.got}`);
  const browser = await checkErrorStatus(games, "grpc-web from a page");
  // The server exposes grpc-status, grpc-message and grpc-status-details-bin
  // to other origins, so a page reads an error's code like any client.
  check(browser.ok, `grpc-web error as a browser page sees it: expected NOT_FOUND, got ${browser.got}`);
  log("error status ok, also with the headers a browser exposes (NOT_FOUND)");

  const created = await games.createGame({
    requestId: `web-test-${process.pid}-${Date.now()}`,
    players: ["alice", "bob"],
    seed: SEED,
  });
  const game = created.game;
  check(game, "CreateGame returned no game");
  check(
    created.tokens.length === 2,
    `CreateGame returned ${created.tokens.length} tokens, expected 2`,
  );
  const tokens = new Map(created.tokens.map((t) => [t.seat, t.token]));
  log(`created ${game.name} at version ${game.version}`);

  // The watch starts from the creation's version, and no action is sent
  // before its snapshot has arrived.
  const stream = watch(watcher, game.name, game.version);
  await stream.until((s) => s.messages.length > 0, "snapshot");
  const first = stream.messages[0];
  check(
    first.message.case === "snapshot",
    `the first watch message is ${first.message.case}, expected a snapshot`,
  );
  const snapshot = first.message.value;
  check(
    snapshot.name === game.name && snapshot.version === game.version,
    `the snapshot is ${snapshot.name} at version ${snapshot.version}, ` +
      `expected ${game.name} at version ${game.version}`,
  );
  log(`snapshot at version ${snapshot.version}`);

  // Play: each action is a legal one, sent with the pending seat's token.
  const pick = rng(7);
  const expected = []; // {event, pending, scores} for each event Act returned
  let version = game.version;
  let readerSeat = 0;
  let finished = false;
  for (let i = 0; i < ACTIONS; i++) {
    // A seat's program reads with its token (seat 0 decides first): a
    // spectator of a delayed game would see an earlier version.
    const legal = await games.getLegalActions(
      { name: game.name },
      { headers: { authorization: `Bearer ${tokens.get(readerSeat)}` } },
    );
    check(
      legal.version === version,
      `GetLegalActions is at version ${legal.version}, expected ${version}`,
    );
    check(legal.actions.length > 0, `no legal action at version ${version}`);
    const seat = legal.pending.seat;
    const token = tokens.get(seat);
    check(token, `no token for the pending seat ${seat}`);
    const action = legal.actions[pick(legal.actions.length)];
    const res = await games.act(
      {
        name: game.name,
        expectedVersion: version,
        requestId: `web-act-${i}`,
        action,
      },
      { headers: { authorization: `Bearer ${token}` } },
    );
    check(res.events.length > 0, `Act #${i} returned no events`);
    check(
      res.version === res.events[res.events.length - 1].version,
      `Act #${i}: response version ${res.version} differs from its last event's`,
    );
    res.events.forEach((event, k) =>
      expected.push({
        event,
        // After the last event of the action, the game's pending decision
        // and scores are the response's; in between they are not known here.
        game: k === res.events.length - 1 ? res.game : null,
      }),
    );
    log(
      `act #${i}: seat ${seat} ${action.action.case} -> version ${res.version} ` +
        `(${res.events.length} event${res.events.length === 1 ? "" : "s"})`,
    );
    version = res.version;
    readerSeat = res.game?.pending?.seat ?? 0;
    if (res.game.status === GameStatus.FINISHED) {
      finished = true;
      break;
    }
  }

  // The stream must bring exactly those events, in order, after the snapshot.
  const events = (s) => s.messages.slice(1).filter((m) => m.message.case === "event");
  await stream.until(
    (s) => {
      const e = events(s);
      return e.length > 0 && e[e.length - 1].message.value.event.version >= version;
    },
    `event of version ${version}`,
  );
  // A moment more, to catch anything extra the stream would send.
  await sleep(300);

  let keepAlives = 0;
  const got = [];
  const checked = stream.messages.length;
  for (const m of stream.messages.slice(1, checked)) {
    switch (m.message.case) {
      case "event":
        got.push(m.message.value);
        break;
      case "keepAlive":
        keepAlives++;
        break;
      case "snapshot":
        throw new TestFailure("a second snapshot on the watch stream");
      case "fellBehind":
        throw new TestFailure(`the watcher fell behind at ${m.message.value}`);
      default:
        throw new TestFailure(`an empty message on the watch stream`);
    }
  }
  check(
    got.length === expected.length,
    `the watch stream delivered ${got.length} events, Act returned ${expected.length}`,
  );
  let prev = snapshot.version;
  got.forEach((w, i) => {
    check(w.event, `watched event #${i} has no event`);
    check(
      w.event.version === prev + 1n,
      `watched event #${i} has version ${w.event.version}, expected ${prev + 1n}`,
    );
    prev = w.event.version;
    const want = expected[i];
    check(
      equals(GameEventSchema, w.event, want.event),
      `watched event #${i} differs from Act's:\n  watched ${show(GameEventSchema, w.event)}` +
        `\n  act     ${show(GameEventSchema, want.event)}`,
    );
    if (want.game) {
      check(
        equals(PendingDecisionSchema, w.pending, want.game.pending),
        `watched event #${i} (version ${prev}): pending ` +
          `${show(PendingDecisionSchema, w.pending)} differs from Act's game ` +
          `${show(PendingDecisionSchema, want.game.pending)}`,
      );
      const scores = want.game.players.map((p) => p.score);
      check(
        JSON.stringify(w.scores) === JSON.stringify(scores),
        `watched event #${i} (version ${prev}): scores ${w.scores} differ from Act's ${scores}`,
      );
    }
  });
  if (finished) {
    // After the event that ends the game the stream closes, cleanly.
    check(got[got.length - 1].event.finished, "the last watched event is not marked finished");
    await stream.until((s) => s.ended, "end of the stream after the game's end");
    check(!stream.error, `the watch stream ended with an error: ${stream.error?.message}`);
  } else {
    check(!stream.ended, "the watch stream ended before the game did");
  }
  log(
    `watch stream ok: snapshot at ${snapshot.version}, then ${got.length} events ` +
      `(versions ${snapshot.version + 1n}..${prev}) equal to Act's, ${keepAlives} keep-alive(s)`,
  );

  // Shutdown with the stream still open: it must end, and the server exit 0.
  const stopped = await stopServer(server);
  check(stopped, `the server ignored SIGTERM for ${STOP_TIMEOUT_MS} ms`);
  check(
    stopped.code === 0,
    `the server exited with code ${stopped.code} (signal ${stopped.signal}) on SIGTERM, expected 0`,
  );
  if (!stream.ended) await stream.until((s) => s.ended, "end of the stream after SIGTERM");
  const how = stream.error
    ? `${ConnectError.from(stream.error).code === Code.Unavailable ? "UNAVAILABLE" : "error"}: ${stream.error.message}`
    : "closed cleanly";
  check(
    !stream.messages.slice(checked).some((m) => m.message.case !== "keepAlive"),
    "the watch stream sent more than keep-alives after the checked events",
  );
  log(`SIGTERM: server exited 0; the watch stream ended (${how})`);
}

async function main() {
  const started = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), "carcassonne-web-test-"));
  let server = null;
  let status = 0;
  const overall = setTimeout(() => {
    console.error(`watch-test: FAILED: the test took more than ${TEST_TIMEOUT_MS} ms`);
    server?.child.kill("SIGKILL");
    process.exit(1);
  }, TEST_TIMEOUT_MS);
  try {
    server = await startServer(dataDir);
    await run(server);
    log(`PASSED in ${Date.now() - started} ms`);
  } catch (e) {
    status = 1;
    const detail =
      e instanceof TestFailure
        ? e.message
        : e instanceof ConnectError
          ? `RPC failed: ${Code[e.code]}: ${e.rawMessage}`
          : (e?.stack ?? String(e));
    console.error(`watch-test: FAILED: ${detail}`);
    if (server?.logLines.length) {
      console.error("server log (last lines):\n" + server.logLines.join("\n"));
    }
  } finally {
    clearTimeout(overall);
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGKILL");
      await server.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(status);
}

await main();
