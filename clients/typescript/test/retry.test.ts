// UNAVAILABLE is retried with the same request, so the same request id:
// an Act sent while the server restarts acts once, when it is back.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Code, type Interceptor } from "@connectrpc/connect";
import { sleep } from "../src/call.js";
import { connect } from "../src/node.js";
import { assertReason, rejection } from "./support/games.js";
import { Server } from "./support/server.js";

// Each test has a server of its own, stopped and restarted at will.
const servers: Server[] = [];
after(async () => {
  // The newest first: a restarted server shares its data directory with the one before.
  for (const server of servers.reverse()) await server.dispose();
});
async function start(): Promise<Server> {
  const server = await Server.start();
  servers.push(server);
  return server;
}

/** Every Act the transport sends: its request id, and how it ended. */
interface Attempt {
  requestId: string;
  outcome: string;
}

function recordActs(attempts: Attempt[]): Interceptor {
  return (next) => async (req) => {
    const message = req.message as { requestId?: unknown };
    const requestId =
      req.method.name === "Act" && typeof message.requestId === "string" ? message.requestId : undefined;
    try {
      const res = await next(req);
      if (requestId !== undefined) attempts.push({ requestId, outcome: "ok" });
      return res;
    } catch (error) {
      const code = (error as { code?: Code }).code;
      if (requestId !== undefined)
        attempts.push({ requestId, outcome: code === undefined ? String(error) : Code[code] });
      throw error;
    }
  };
}

test("an Act sent while the server is down is retried with its request id until the server is back", async () => {
  let server = await start();
  const attempts: Attempt[] = [];
  const client = connect(server.addr, {
    interceptors: [recordActs(attempts)],
    retry: { attempts: 40, initialBackoffMs: 25, maxBackoffMs: 200 },
  });
  const created = await client.createGame(["Ada", "Bob"]);
  const legal = await client.legalActions(created.name, created.tokens[0]);
  const token = created.tokens[legal.pending.seat]!;
  const action = legal.actions[0]!;

  assert.deepEqual(await server.stop(), { code: 0, signal: null });
  const acting = client.act(created.name, token, legal.version, action);
  acting.catch(() => undefined); // awaited below; a failure meanwhile must not go unhandled
  // Back once the call has met UNAVAILABLE at least twice.
  for (let i = 0; attempts.length < 2; i++) {
    assert.ok(i < 400, `the Act was not retried: ${JSON.stringify(attempts)}`);
    await sleep(10);
  }
  server = await server.restart();
  servers.push(server);
  const answer = await acting;

  assert.ok(attempts.length >= 3, JSON.stringify(attempts));
  assert.ok(
    attempts.slice(0, -1).every((a) => a.outcome === "Unavailable"),
    JSON.stringify(attempts),
  );
  assert.equal(attempts.at(-1)?.outcome, "ok");
  const ids = new Set(attempts.map((a) => a.requestId));
  assert.equal(ids.size, 1, "every try carries the same request id");
  assert.ok(answer.version > legal.version);

  // The server acted once: that request id is the action that was stored.
  const [requestId] = ids;
  const again = await client.act(created.name, token, legal.version, action, { requestId: requestId! });
  assert.equal(again.version, answer.version);
  assert.equal((await client.getGame(created.name, token)).version, answer.version);
});

test("other errors are not retried", async () => {
  const server = await start();
  const attempts: Attempt[] = [];
  const client = connect(server.addr, { interceptors: [recordActs(attempts)] });
  const created = await client.createGame(["Ada", "Bob"]);
  const legal = await client.legalActions(created.name, created.tokens[0]);
  const stale = legal.version - 1n;
  const error = await rejection(() =>
    client.act(created.name, created.tokens[legal.pending.seat]!, stale, legal.actions[0]!),
  );
  assertReason(error, Code.Aborted, "STALE_VERSION");
  assert.equal(attempts.length, 1);
});

test("a server that stays away fails the call with UNAVAILABLE once the tries are spent", async () => {
  const down = await Server.start();
  const addr = down.addr;
  await down.stop();
  await down.dispose();
  const attempts: Attempt[] = [];
  const client = connect(addr, {
    interceptors: [recordActs(attempts)],
    retry: { attempts: 3, initialBackoffMs: 10 },
  });
  const error = await rejection(() => client.act("games/x", "token", 2n, {}));
  assert.equal(error.code, Code.Unavailable);
  assert.equal(error.reason, undefined, "a transport failure carries no reason");
  assert.equal(attempts.length, 3);
});
