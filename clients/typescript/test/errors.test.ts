// Rejected calls surface as GameError with the gRPC code and the ErrorInfo
// reason (and its metadata), and change nothing.

import assert from "node:assert/strict";
import { after, before, beforeEach, test } from "node:test";
import { equals } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { Code, GameError, newRequestId, pb, type CreatedGame, type GameClient } from "../src/index.js";
import { connect } from "../src/node.js";
import { assertReason, rejection } from "./support/games.js";
import { Server } from "./support/server.js";

let server: Server;
let client: GameClient;
let created: CreatedGame;

before(async () => {
  server = await Server.start();
  client = connect(server.addr);
});
after(async () => {
  await server.stop();
  await server.dispose();
});
beforeEach(async () => {
  created = await client.createGame(["Ada", "Bob"]);
});

const tokenOf = (seat: number) => created.tokens[seat]!;

test("a stale version is ABORTED STALE_VERSION with the current version", async () => {
  const first = await client.legalActions(created.name, tokenOf(0));
  await client.act(created.name, tokenOf(first.pending.seat), first.version, first.actions[0]!);
  const now = await client.legalActions(created.name, tokenOf(0));
  assert.ok(now.version > first.version);
  // Acting on what the game was before.
  const error = await rejection(() =>
    client.act(created.name, tokenOf(now.pending.seat), first.version, now.actions[0]!),
  );
  assertReason(error, Code.Aborted, "STALE_VERSION");
  assert.equal(error.codeName, "ABORTED");
  assert.equal(error.metadata["version"], String(now.version));
  assert.match(error.message, /^ABORTED STALE_VERSION: .* version=\d+$/);
});

test("another seat's decision is PERMISSION_DENIED NOT_YOUR_TURN naming whose it is", async () => {
  const legal = await client.legalActions(created.name, tokenOf(0));
  const other = 1 - legal.pending.seat;
  const error = await rejection(() =>
    client.act(created.name, tokenOf(other), legal.version, legal.actions[0]!),
  );
  assertReason(error, Code.PermissionDenied, "NOT_YOUR_TURN");
  assert.equal(error.metadata["seat"], String(legal.pending.seat));
});

test("a move the rules forbid is FAILED_PRECONDITION RULE_VIOLATION with its rule id", async () => {
  const legal = await client.legalActions(created.name, tokenOf(0));
  assert.equal(legal.pending.kind, pb.DecisionKind.PLACE_TILE);
  const farAway = {
    action: { case: "placeTile", value: { position: { x: 50, y: 50 }, rotation: 0 } },
  } as const;
  const error = await rejection(() =>
    client.act(created.name, tokenOf(legal.pending.seat), legal.version, farAway),
  );
  assertReason(error, Code.FailedPrecondition, "RULE_VIOLATION");
  // A rule id of docs/rules.md, such as B-T2.
  assert.match(error.rule ?? "", /^[A-Z]+-[A-Z]+\d+$/, `rule id of ${error.message}`);

  const follower = { action: { case: "placeFollower", value: {} } } as const;
  const wrong = await rejection(() =>
    client.act(created.name, tokenOf(legal.pending.seat), legal.version, follower),
  );
  assertReason(wrong, Code.FailedPrecondition, "WRONG_DECISION");
});

test("tokens: a wrong one is BAD_TOKEN, none is MISSING_TOKEN, also on reads", async () => {
  const legal = await client.legalActions(created.name, tokenOf(0));
  const bad = await rejection(() =>
    client.act(created.name, "not-a-token", legal.version, legal.actions[0]!),
  );
  assertReason(bad, Code.PermissionDenied, "BAD_TOKEN");
  const missing = await rejection(() => client.act(created.name, "", legal.version, legal.actions[0]!));
  assertReason(missing, Code.Unauthenticated, "MISSING_TOKEN");
  const read = await rejection(() => client.getGame(created.name, "not-a-token"));
  assertReason(read, Code.PermissionDenied, "BAD_TOKEN");
});

test("rejected calls change nothing", async () => {
  const before = await client.getGame(created.name, tokenOf(0));
  const legal = await client.legalActions(created.name, tokenOf(0));
  for (const token of ["wrong", tokenOf(1 - legal.pending.seat)]) {
    await rejection(() => client.act(created.name, token, legal.version, legal.actions[0]!));
  }
  assert.ok(equals(pb.GameSchema, await client.getGame(created.name, tokenOf(0)), before));
});

test("an Act retried with its request id is answered once; another action under it is REQUEST_ID_REUSED", async () => {
  const legal = await client.legalActions(created.name, tokenOf(0));
  const token = tokenOf(legal.pending.seat);
  const requestId = newRequestId();
  const first = await client.act(created.name, token, legal.version, legal.actions[0]!, { requestId });
  const again = await client.act(created.name, token, legal.version, legal.actions[0]!, { requestId });
  assert.equal(again.version, first.version);
  assert.equal((await client.getGame(created.name, token)).version, first.version);
  const other = legal.actions[1];
  assert.ok(other, "a first tile has more than one legal placement");
  const reused = await rejection(() => client.act(created.name, token, legal.version, other, { requestId }));
  assertReason(reused, Code.AlreadyExists, "REQUEST_ID_REUSED");
});

test("a CreateGame retried with its request id returns the first answer, tokens included", async () => {
  const requestId = newRequestId();
  const first = await client.createGame(["Ada", "Bob"], { requestId });
  const again = await client.createGame(["Ada", "Bob"], { requestId });
  assert.equal(again.name, first.name);
  assert.deepEqual(again.tokens, first.tokens);
  const reused = await rejection(() => client.createGame(["Ada", "Eve"], { requestId }));
  assertReason(reused, Code.AlreadyExists, "REQUEST_ID_REUSED");
});

test("bad arguments name their field; an unknown game is NOT_FOUND", async () => {
  const solo = await rejection(() => client.createGame(["Solo"]));
  assertReason(solo, Code.InvalidArgument, "INVALID_ARGUMENT");
  assert.equal(solo.metadata["field"], "players");
  const missing = await rejection(() => client.getGame("games/no-such-game"));
  assertReason(missing, Code.NotFound, "GAME_NOT_FOUND");
  assert.equal(missing.codeName, "NOT_FOUND");
});

test("an error without details keeps its code and message, with no reason", () => {
  const error = GameError.from(new Error("socket hang up"));
  assert.equal(error.reason, undefined);
  assert.equal(error.codeName, "UNKNOWN");
  assert.deepEqual(error.metadata, {});
});

test("a stream the server refused (HTTP/2 REFUSED_STREAM) is UNAVAILABLE, to be sent again; other INTERNAL errors stay INTERNAL", () => {
  const refused = new ConnectError("Stream closed with error code NGHTTP2_REFUSED_STREAM", Code.Internal);
  assert.equal(GameError.from(refused).code, Code.Unavailable);
  const ours = new ConnectError("store task failed", Code.Internal);
  assert.equal(GameError.from(ours).code, Code.Internal);
});
