// Clocks, timeouts, resigning and aborting (docs/rules.md, T-1 to T-11)
// through the real server. The tests that wait for a deadline use a limit
// of 1500 ms per decision, so none waits more than a few seconds.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { create, equals } from "@bufbuild/protobuf";
import {
  clocks,
  Code,
  localNowMs,
  newRequestId,
  pb,
  playRandomGame,
  seatClock,
  seededRandom,
  ServerClock,
  timeControl,
  type CreatedGame,
  type GameClient,
  type LegalActions,
} from "../src/index.js";
import { connect } from "../src/node.js";
import { sleep } from "../src/call.js";
import { assertReason, rejection, seedOf } from "./support/games.js";
import { Server } from "./support/server.js";

/** A limit per decision short enough to wait for. */
const SHORT_MS = 1500;
/** How long past a deadline a test waits for the server's own timeout. */
const TIMEOUT_SLACK_MS = 3000;

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

/** Reads until `done`, for `ms` at most (then fails). */
async function waitUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, ms: number): Promise<T> {
  const giveUp = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    assert.ok(Date.now() < giveUp, `not done after ${ms} ms`);
    await sleep(50);
  }
}

/** Every event after `version` up to now, as a watcher gets them. */
async function eventsSince(created: CreatedGame, version: bigint): Promise<pb.WatchedEvent[]> {
  const token = created.tokens[0]!;
  const last = (await client.getGame(created.name, token)).version;
  const events: pb.WatchedEvent[] = [];
  if (last === version) return events;
  for await (const message of client.watchGame(created.name, { token, fromVersion: version })) {
    if (message.message.case !== "event") continue;
    events.push(message.message.value);
    if ((message.message.value.event?.version ?? 0n) >= last) break;
  }
  return events;
}

/** The placement the server takes for a seat under auto (T-7): the
 * smallest x, then y, then rotation. */
function firstPlacement(legal: LegalActions): pb.Action {
  const key = (a: pb.Action) => {
    const p = a.action.case === "placeTile" ? a.action.value : undefined;
    return [p?.position?.x ?? 0, p?.position?.y ?? 0, p?.rotation ?? 0];
  };
  const placements = legal.actions.filter((a) => a.action.case === "placeTile");
  return placements.reduce((best, a) => {
    const [x, y, r] = key(a);
    const [bx, by, br] = key(best);
    return x! < bx! || (x === bx && (y! < by! || (y === by && r! < br!))) ? a : best;
  });
}

const ending = (reason: pb.EndReason, seat = 0) => create(pb.EndingSchema, { reason, seat });
const tokenOf = (created: CreatedGame, seat: number) => created.tokens[seat]!;

test("timeControl builds what the server keeps", async () => {
  const control = timeControl({ mainMs: 90_000, incrementMs: 2_000, decisionMs: 20_000, onTimeout: "auto" });
  assert.deepEqual(control, {
    mainMs: 90_000,
    incrementMs: 2_000,
    decisionMs: 20_000,
    onTimeout: pb.TimeoutRule.AUTO,
  });
  assert.equal(timeControl({ decisionMs: 5 }).onTimeout, pb.TimeoutRule.FORFEIT);
  assert.throws(() => timeControl({ mainMs: 1, onTimeout: "lose" as "auto" }), RangeError);

  const created = await client.createGame(["Ada", "Bob"], { timeControl: control });
  const game = created.game;
  assert.ok(equals(pb.TimeControlSchema, game.timeControl!, create(pb.TimeControlSchema, control)));
  assert.deepEqual(
    game.players.map((p) => p.timeLeftMs),
    [90_000n, 90_000n],
  );
  // The first decision's deadline: its limit, which comes before the main time's end.
  assert.equal(game.pending?.deadlineMs, game.clockTimeMs + 20_000n);

  const plain = await client.createGame(["Ada", "Bob"]);
  assert.equal(plain.game.timeControl, undefined);
  assert.equal(plain.game.pending?.deadlineMs, 0n);
  assert.ok(plain.game.players.every((p) => p.timeLeftMs === undefined));

  // The server checks the numbers: an increment needs a main time.
  const error = await rejection(() =>
    client.createGame(["Ada", "Bob"], { timeControl: timeControl({ incrementMs: 5 }) }),
  );
  assertReason(error, Code.InvalidArgument, "INVALID_ARGUMENT");
  assert.match(error.metadata["field"] ?? "", /^time_control/);
});

test("a clocked game is played to its end with time to spare at every decision", async () => {
  const control = timeControl({ mainMs: 120_000, incrementMs: 1_000, decisionMs: 30_000 });
  const created = await client.createGame(["Ada", "Bob", "Cy"], {
    timeControl: control,
    seed: seedOf("clocked"),
  });
  const deadlines: bigint[] = [];
  const stored: bigint[] = [];
  const { game, steps } = await playRandomGame(client, created, {
    random: seededRandom(3),
    onDecision: (legal) => {
      const now = BigInt(localNowMs());
      assert.ok(legal.pending.deadlineMs > now, "every decision has time left when the bot reads it");
      // The seat's decision runs against both the limit and its main time.
      assert.ok(legal.pending.deadlineMs <= now + 30_000n);
      deadlines.push(legal.pending.deadlineMs);
    },
    onResponse: (response) => {
      stored.push(response.events[0]!.timeMs);
      // One clock runs: that of the seat that owes the next decision.
      const pending = response.game!.pending!;
      for (const clock of clocks(response.game!)) {
        assert.ok(clock.mainLeftMs !== undefined && clock.mainLeftMs > 0);
        const owes = pending.kind !== pb.DecisionKind.UNSPECIFIED && clock.seat === pending.seat;
        assert.equal(clock.running, owes);
      }
    },
  });

  assert.ok(steps > 100);
  assert.equal(deadlines.length, steps);
  assert.equal(stored.length, steps);
  stored.forEach((t, i) => assert.ok(t < deadlines[i]!, `action ${i} stored before its deadline`));
  assert.equal(game.status, pb.GameStatus.FINISHED);
  assert.equal(game.ending?.reason, pb.EndReason.NORMAL);
  assert.equal(game.pending?.deadlineMs, 0n);
  for (const player of game.players) {
    assert.equal(player.status, pb.SeatStatus.PLAYING);
    // Each seat got an increment per turn: more than it started with.
    assert.ok(player.timeLeftMs! > 120_000n, `seat ${player.seat}: ${player.timeLeftMs}`);
    const clock = seatClock(game, player.seat);
    assert.deepEqual(
      [clock.mainLeftMs, clock.decisionLeftMs, clock.running],
      [Number(player.timeLeftMs), undefined, false],
    );
  }
  // Ranks by score, equal scores sharing one; the winners are ranked first.
  for (const a of game.players) {
    assert.equal(a.rank, 1 + game.players.filter((b) => b.score > a.score).length);
  }
  assert.deepEqual(
    [...game.winners].sort(),
    game.players.filter((p) => p.rank === 1).map((p) => p.seat),
  );
});

test("a seat's clock is read from a game and from a watched event", async () => {
  const created = await client.createGame(["Ada", "Bob"], {
    timeControl: timeControl({ mainMs: 100_000, decisionMs: 40_000 }),
  });
  const start = created.game;
  const at = Number(start.clockTimeMs);

  // Seat 0 decides first: its clock runs; seat 1's stands.
  const mine = seatClock(start, 0, { nowMs: at + 700 });
  assert.deepEqual(mine, {
    seat: 0,
    mainLeftMs: 99_300,
    decisionLeftMs: 39_300,
    deadlineMs: at + 40_000,
    running: true,
  });
  assert.equal(BigInt(mine.deadlineMs), start.pending?.deadlineMs);
  assert.deepEqual(seatClock(start, 1, { nowMs: at + 700 }), {
    seat: 1,
    mainLeftMs: 100_000,
    decisionLeftMs: undefined,
    deadlineMs: 0,
    running: false,
  });
  // Never below 0.
  const late = seatClock(start, 0, { nowMs: at + 200_000 });
  assert.deepEqual([late.mainLeftMs, late.decisionLeftMs], [0, 0]);

  const legal = await client.legalActions(created.name, tokenOf(created, 0));
  const placed = await client.act(created.name, tokenOf(created, 0), legal.version, legal.actions[0]!);
  const game = placed.game!;
  const [watched, ...more] = await eventsSince(created, legal.version);
  assert.equal(more.length, 0);
  assert.equal(watched!.event?.version, game.version);
  assert.equal(watched!.event?.timeMs, game.clockTimeMs);
  assert.deepEqual(
    watched!.timeLeftMs,
    game.players.map((p) => p.timeLeftMs),
  );
  assert.ok(watched!.timeLeftMs[0]! < 100_000n, "seat 0's clock ran while it decided");
  const nowMs = Number(game.clockTimeMs) + 250;
  for (const seat of [0, 1]) {
    assert.deepEqual(seatClock(watched!, seat, { nowMs }), seatClock(game, seat, { nowMs }));
  }
  // Seat 0 owes its follower decision: a new limit from the placement on.
  const follower = seatClock(watched!, 0, { nowMs });
  assert.equal(follower.decisionLeftMs, 40_000 - 250);
  assert.equal(follower.mainLeftMs, Number(watched!.timeLeftMs[0]) - 250);
  // Read now, by this machine's clock: a little less than just after the action.
  const now = seatClock(game, 0).mainLeftMs!;
  assert.ok(now > 0 && now <= Number(watched!.timeLeftMs[0]));
  assert.throws(() => seatClock(game, 2), RangeError);

  // The ServerClock's estimate is never earlier than the server's time.
  const serverClock = new ServerClock();
  const sent = serverClock.localMs();
  const answer = await client.resign(created.name, tokenOf(created, 1), game.version);
  serverClock.observeAct(sent, answer);
  assert.notEqual(serverClock.offsetMs, undefined);
  assert.ok(serverClock.nowMs() >= Number(answer.events[0]!.timeMs));
});

test("the ServerClock's estimate is the least bound seen", () => {
  let local = 5_000;
  const clock = new ServerClock(() => local);
  assert.equal(clock.nowMs(), 5_000, "no offset before anything is seen");
  // Stored 300 ms after it was sent: the server is at most 300 ms ahead.
  clock.observe(1_000, 1_300n);
  assert.equal(clock.nowMs(), 5_300);
  clock.observe(2_000, 2_100);
  clock.observe(3_000, 3_900);
  assert.equal(clock.offsetMs, 100);
  assert.equal(clock.nowMs(), 5_100);
  // A server behind this machine's clock.
  clock.observe(4_000, 3_000);
  local = 6_000;
  assert.equal(clock.nowMs(), 5_000);
});

test("a resignation ends a 2-player game for the other seat, and is retried once", async () => {
  const created = await client.createGame(["Ada", "Bob"]);
  const legal = await client.legalActions(created.name, tokenOf(created, 0));
  const placed = await client.act(created.name, tokenOf(created, 0), legal.version, legal.actions[0]!);
  // Seat 1 resigns while seat 0 still decides (its follower).
  assert.equal(placed.game?.pending?.seat, 0);
  const requestId = newRequestId();
  const answer = await client.resign(created.name, tokenOf(created, 1), placed.version, { requestId });

  assert.equal(answer.events.length, 1);
  const event = answer.events[0]!;
  assert.equal(event.event.case, "resigned");
  assert.equal(event.seat, 1);
  assert.equal(event.seatOut, 1);
  assert.ok(event.finished);
  const game = answer.game!;
  assert.equal(game.status, pb.GameStatus.FINISHED);
  assert.ok(equals(pb.EndingSchema, game.ending!, ending(pb.EndReason.RESIGNED, 1)));
  assert.deepEqual(game.winners, [0]);
  assert.deepEqual(
    game.players.map((p) => p.rank),
    [1, 2],
  );
  assert.deepEqual(
    game.players.map((p) => p.status),
    [pb.SeatStatus.PLAYING, pb.SeatStatus.RESIGNED],
  );
  assert.ok((await client.legalActions(created.name, tokenOf(created, 0))).finished);

  // Retried with its request id, the resignation is answered once.
  const again = await client.resign(created.name, tokenOf(created, 1), placed.version, { requestId });
  assert.equal(again.version, answer.version);
  assert.equal((await client.getGame(created.name)).version, answer.version);
  // Nothing is played after the end.
  const error = await rejection(() => client.resign(created.name, tokenOf(created, 0), answer.version));
  assertReason(error, Code.FailedPrecondition, "GAME_FINISHED");
});

test("an abort before any move ends the game with no result", async () => {
  const created = await client.createGame(["Ada", "Bob", "Cy"]);
  const answer = await client.abort(created.name, tokenOf(created, 2), created.game.version);
  assert.equal(answer.events.length, 1);
  const event = answer.events[0]!;
  assert.equal(event.event.case, "aborted");
  assert.equal(event.seat, 2);
  assert.ok(event.finished);
  const game = await client.getGame(created.name);
  assert.equal(game.status, pb.GameStatus.FINISHED);
  assert.ok(equals(pb.EndingSchema, game.ending!, ending(pb.EndReason.ABORTED, 2)));
  assert.deepEqual(game.winners, []);
  assert.deepEqual(
    game.players.map((p) => p.rank),
    [0, 0, 0],
  );
});

test("an abort is refused (RULE_VIOLATION, T-9) once every seat has decided", async () => {
  const created = await client.createGame(["Ada", "Bob"]);
  const playOne = async (): Promise<LegalActions> => {
    const legal = await client.legalActions(created.name, tokenOf(created, 0));
    await client.act(created.name, tokenOf(created, legal.pending.seat), legal.version, legal.actions[0]!);
    return client.legalActions(created.name, tokenOf(created, 0));
  };
  // Seat 0 places its tile and decides on its follower; seat 1 places.
  await playOne();
  let now = await playOne();
  assert.equal(now.pending.seat, 1);
  now = await playOne();
  const error = await rejection(() => client.abort(created.name, tokenOf(created, 0), now.version));
  assertReason(error, Code.FailedPrecondition, "RULE_VIOLATION");
  assert.equal(error.rule, "T-9");
  const game = await client.getGame(created.name, tokenOf(created, 0));
  assert.equal(game.version, now.version);
  assert.equal(game.status, pb.GameStatus.RUNNING);

  // While seat 1 had not decided yet, the same abort ended the game.
  const other = await client.createGame(["Ada", "Bob"]);
  const legal = await client.legalActions(other.name, tokenOf(other, 0));
  const placed = await client.act(other.name, tokenOf(other, 0), legal.version, legal.actions[0]!);
  const ended = await client.abort(other.name, tokenOf(other, 0), placed.version);
  assert.equal(ended.game?.ending?.reason, pb.EndReason.ABORTED);
});

test("under forfeit the server times a seat out by itself; its late action is OUT_OF_TIME", async () => {
  const created = await client.createGame(["Ada", "Bob"], {
    timeControl: timeControl({ decisionMs: SHORT_MS, onTimeout: "forfeit" }),
  });
  const legal = await client.legalActions(created.name, tokenOf(created, 0));
  const deadline = legal.pending.deadlineMs;
  const left = Number(deadline) - localNowMs();
  assert.ok(left > 0 && left <= SHORT_MS, `${left} ms left`);

  // Nobody acts; reading changes nothing, the server's timekeeper does it.
  const game = await waitUntil(
    () => client.getGame(created.name, tokenOf(created, 1)),
    (g) => g.status === pb.GameStatus.FINISHED,
    SHORT_MS + TIMEOUT_SLACK_MS,
  );
  assert.ok(equals(pb.EndingSchema, game.ending!, ending(pb.EndReason.OUT_OF_TIME, 0)));
  assert.deepEqual(game.winners, [1]);
  assert.deepEqual(
    game.players.map((p) => p.rank),
    [2, 1],
  );
  assert.deepEqual(
    game.players.map((p) => p.status),
    [pb.SeatStatus.OUT_OF_TIME, pb.SeatStatus.PLAYING],
  );
  const events = await eventsSince(created, legal.version);
  assert.equal(events.length, 1);
  const timedOut = events[0]!;
  const event = timedOut.event!;
  assert.equal(event.event.case, "timedOut");
  assert.equal(event.event.case === "timedOut" ? event.event.value.seat : -1, 0);
  assert.equal(event.seatOut, 0);
  assert.equal(event.abandoned, legal.pending.tile, "the drawn tile left the game");
  assert.ok(event.timeMs >= deadline, "never before the deadline");
  assert.ok(event.finished);
  assert.ok(equals(pb.EndingSchema, timedOut.ending!, game.ending!));

  // The seat's action, sent now on the version it read, is refused.
  const late = await rejection(() =>
    client.act(created.name, tokenOf(created, 0), legal.version, legal.actions[0]!),
  );
  assertReason(late, Code.FailedPrecondition, "OUT_OF_TIME");
  assert.deepEqual(late.metadata, { seat: "0", deadline_ms: String(deadline), rule: "T-4" });
});

test("an action sent at its deadline is refused with OUT_OF_TIME and the timeout stored", async () => {
  const created = await client.createGame(["Ada", "Bob"], {
    timeControl: timeControl({ decisionMs: SHORT_MS }),
  });
  const legal = await client.legalActions(created.name, tokenOf(created, 0));
  const deadline = Number(legal.pending.deadlineMs);
  while (localNowMs() < deadline) await sleep(Math.max(1, deadline - localNowMs()));
  // Whether it comes just before the timekeeper or just after it.
  const late = await rejection(() =>
    client.act(created.name, tokenOf(created, 0), legal.version, legal.actions[0]!),
  );
  assertReason(late, Code.FailedPrecondition, "OUT_OF_TIME");
  assert.equal(late.metadata["deadline_ms"], String(deadline));
  assert.equal(late.metadata["seat"], "0");
  const game = await client.getGame(created.name, tokenOf(created, 0));
  assert.equal(game.version, legal.version + 1n, "the timeout alone was stored");
  assert.equal(game.ending?.reason, pb.EndReason.OUT_OF_TIME);
});

test("under auto the server decides for the seat and the game goes on", async () => {
  const created = await client.createGame(["Ada", "Bob"], {
    timeControl: timeControl({ decisionMs: SHORT_MS, onTimeout: "auto" }),
  });
  const legal = await client.legalActions(created.name, tokenOf(created, 0));
  const now = await waitUntil(
    () => client.legalActions(created.name, tokenOf(created, 1)),
    (l) => l.pending.seat === 1,
    SHORT_MS + TIMEOUT_SLACK_MS,
  );
  const events = await eventsSince(created, legal.version);
  const timedOut = events[0]!.event!;
  assert.equal(timedOut.event.case, "timedOut");
  assert.ok(timedOut.timeMs >= legal.pending.deadlineMs);
  assert.equal(timedOut.seatOut, undefined);
  assert.equal(timedOut.finished, false);
  // The first legal placement, then no follower.
  assert.equal(timedOut.decidedForSeat.length, 2);
  assert.ok(equals(pb.ActionSchema, timedOut.decidedForSeat[0]!, firstPlacement(legal)));
  assert.equal(timedOut.decidedForSeat[1]!.action.case, "placeFollower");
  const last = events.at(-1)!;
  assert.equal(last.pending?.seat, 1);
  assert.ok((last.pending?.deadlineMs ?? 0n) > 0n);
  const game = await client.getGame(created.name, tokenOf(created, 0));
  assert.equal(game.status, pb.GameStatus.RUNNING);
  assert.deepEqual(
    game.players.map((p) => p.status),
    [pb.SeatStatus.PLAYING, pb.SeatStatus.PLAYING],
  );

  // Seat 0's own answer, too late, is refused with the same reason.
  const late = await rejection(() =>
    client.act(created.name, tokenOf(created, 0), legal.version, legal.actions[0]!),
  );
  assertReason(late, Code.FailedPrecondition, "OUT_OF_TIME");
  assert.equal(late.metadata["seat"], "0");
  // Seat 1 resigns, so that the server stops timing out an empty table.
  const ended = await client.resign(created.name, tokenOf(created, 1), now.version);
  assert.ok(equals(pb.EndingSchema, ended.game!.ending!, ending(pb.EndReason.RESIGNED, 1)));
  assert.deepEqual(ended.game!.winners, [0]);
});

test("request ids beginning with '~' are the server's own: INVALID_ARGUMENT", async () => {
  const created = await client.createGame(["Ada", "Bob"]);
  const legal = await client.legalActions(created.name, tokenOf(created, 0));
  const calls = [
    () =>
      client.act(created.name, tokenOf(created, 0), legal.version, legal.actions[0]!, { requestId: "~mine" }),
    () => client.resign(created.name, tokenOf(created, 1), legal.version, { requestId: "~r1" }),
    () => client.abort(created.name, tokenOf(created, 1), legal.version, { requestId: "~a1" }),
    () => client.createGame(["Ada", "Bob"], { requestId: `~${newRequestId()}` }),
  ];
  for (const call of calls) {
    const error = await rejection(call);
    assertReason(error, Code.InvalidArgument, "INVALID_ARGUMENT");
    assert.equal(error.metadata["field"], "request_id");
  }
  assert.equal((await client.getGame(created.name)).version, legal.version);
});
