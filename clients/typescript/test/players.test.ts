// Registered players against the real server: registration, organisers,
// the refusals' reasons, consent (a creation seats only its caller), and
// the player's one stream, which resumes after a reconnect (or a restart of
// the server) without losing or repeating a message.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import {
  Code,
  GameClient,
  pb,
  randomPolicy,
  Reason,
  RegisteredBot,
  seededRandom,
  timeControl,
  type PlayerResumeInfo,
} from "../src/index.js";
import { connect } from "../src/node.js";
import { assertReason, rejection } from "./support/games.js";
import { ADMIN_KEY, agreedGame, REPO, unique } from "./support/league.js";
import { Server } from "./support/server.js";

let server: Server;
let client: GameClient;

before(async () => {
  server = await Server.start({ adminKey: ADMIN_KEY });
  client = connect(server.addr);
});
after(async () => {
  await server.stop();
  await server.dispose();
});

/** The next message of `kind` of `stream`, keep-alives and challenges
 * skipped. */
async function nextOf(
  stream: AsyncIterator<pb.WatchPlayerResponse>,
  kind: pb.WatchPlayerResponse["message"]["case"],
): Promise<pb.WatchPlayerResponse> {
  for (;;) {
    const next = await stream.next();
    assert.equal(next.done, false, `the stream ended before a ${kind}`);
    const message = next.value as pb.WatchPlayerResponse;
    if (message.message.case === "keepAlive" || message.message.case === "challenge") continue;
    assert.equal(message.message.case, kind);
    return message;
  }
}

test("registration shows the key once, and names are unique regardless of case", async () => {
  const name = unique("Ada");
  const registered = await client.registerPlayer(name);
  assert.equal(registered.name, `players/${name}`);
  assert.equal(registered.apiKey.length, 64);
  assert.equal(registered.player.organiser, false);
  const shown = await client.getPlayer(name);
  assert.equal(shown.name, `players/${name}`);
  assert.ok(!JSON.stringify(shown).includes(registered.apiKey));
  assert.equal((await client.getPlayer(`players/${name}`)).name, shown.name);
  const taken = await rejection(() => client.registerPlayer(name.toUpperCase()));
  assertReason(taken, Code.AlreadyExists, Reason.NAME_TAKEN);
  assert.equal(taken.metadata["name"], `players/${name.toUpperCase()}`);
  const bad = await rejection(() => client.registerPlayer("no spaces"));
  assertReason(bad, Code.InvalidArgument, Reason.INVALID_ARGUMENT);
});

test("only the admin key makes organisers", async () => {
  const name = unique("Boss");
  const { apiKey } = await client.registerPlayer(name);
  const refused = await rejection(() => client.setOrganiser(name, apiKey));
  assertReason(refused, Code.PermissionDenied, Reason.NOT_ADMIN);
  assert.equal((await client.setOrganiser(name, ADMIN_KEY)).organiser, true);
  assert.equal((await client.getPlayer(name)).organiser, true);
  assert.equal((await client.setOrganiser(name, ADMIN_KEY, false)).organiser, false);
});

test("refused calls carry their reasons", async () => {
  const player = await client.registerPlayer(unique("Cleo"));
  const other = await client.registerPlayer(unique("Dan"));
  const clock = timeControl({ decisionMs: 5_000 });
  const notOrganiser = await rejection(() =>
    client.createTournament(player.apiKey, [player.name, other.name], { rounds: 1, timeControl: clock }),
  );
  assertReason(notOrganiser, Code.PermissionDenied, Reason.NOT_ORGANISER);
  // A key of nobody, on the player's stream and on a creation.
  const unknown = await rejection(async () => {
    for await (const _ of client.watchPlayer("not-a-key-of-anyone")) break;
  });
  assertReason(unknown, Code.Unauthenticated, Reason.UNKNOWN_KEY);
  const unknownCreator = await rejection(() =>
    client.createTournament("not-a-key-of-anyone", [player.name, other.name], {
      rounds: 1,
      timeControl: clock,
    }),
  );
  assertReason(unknownCreator, Code.Unauthenticated, Reason.UNKNOWN_KEY);
  const missing = await rejection(() => client.getPlayer(unique("Nobody")));
  assertReason(missing, Code.NotFound, Reason.PLAYER_NOT_FOUND);
  assert.match(missing.metadata["name"] ?? "", /^players\/Nobody-/);
  assertReason(
    await rejection(() => client.ratingHistory(unique("Nobody"))),
    Code.NotFound,
    Reason.PLAYER_NOT_FOUND,
  );
  for (const call of [
    () => client.getTournament("tournaments/nosuchtournament"),
    () => client.standings("nosuchtournament"),
    () => client.exportTournamentArchive("tournaments/nosuchtournament"),
  ]) {
    assertReason(await rejection(call), Code.NotFound, Reason.TOURNAMENT_NOT_FOUND);
  }
  // A challenge's seat for a player nobody registered.
  const seat = await rejection(() => client.createChallenge(player.apiKey, [player.name, unique("Nobody")]));
  assertReason(seat, Code.NotFound, Reason.PLAYER_NOT_FOUND);
  await assert.rejects(() => client.leaderboard("triples" as "duel"), RangeError);
});

test("Reason names every reason of the server's one table of errors, and nothing else", () => {
  const table = readFileSync(join(REPO, "src", "api", "status.rs"), "utf8");
  const served = new Set([...table.matchAll(/\(Code::\w+, "([A-Z_]+)"\)/g)].map((m) => m[1]));
  assert.ok(served.size >= 25, [...served].join(" "));
  assert.deepEqual(new Set(Object.values(Reason)), served);
  for (const [key, value] of Object.entries(Reason)) assert.equal(key, value);
});

test("a registered player's seat takes its key, and no token is made for it", async () => {
  const ada = await client.registerPlayer(unique("Ada"));
  const created = await client.createGame(["Ada", "Guest"], { accounts: [ada.name, ""], key: ada.apiKey });
  assert.equal(created.tokens[0], "", "no token for a registered player's seat");
  assert.ok(created.tokens[1], "a guest seat has its own");
  assert.equal(created.game.players[0]?.account, ada.name);
  const legal = await client.legalActions(created.name, ada.apiKey);
  assert.equal(legal.pending.seat, 0);
  await client.act(created.name, ada.apiKey, legal.version, legal.actions[0]!);
});

test("a creation seats only its caller and rates nothing", async () => {
  // The attack of issue 25: seats for registered players, rated, named by
  // someone else. Another player's seat is theirs only through a challenge
  // they accept.
  const ada = await client.registerPlayer(unique("Ada"));
  const brun = await client.registerPlayer(unique("Brun"));
  const refused: [string[], string | undefined, boolean][] = [
    // Both seats named, with no key, with one of theirs, with a stranger's.
    [[ada.name, brun.name], undefined, false],
    [[ada.name, brun.name], ada.apiKey, false],
    [[ada.name, ""], brun.apiKey, false],
    // Ada alone, without her key; Brun with Ada's.
    [[ada.name, ""], undefined, false],
    [["", brun.name], ada.apiKey, false],
    // Rated: never by a creation, even of the caller's own seat.
    [[ada.name, ""], ada.apiKey, true],
    [[], undefined, true],
  ];
  for (const [accounts, key, rated] of refused) {
    const error = await rejection(() =>
      client.createGame(["A", "B"], {
        accounts,
        rated,
        timeControl: timeControl({ decisionMs: 5_000 }),
        ...(key === undefined ? {} : { key }),
      }),
    );
    assertReason(error, Code.PermissionDenied, Reason.CONSENT_REQUIRED);
  }
  // Nothing happened to Brun: no game, no rating.
  assert.equal((await client.getPlayer(brun.name)).duelRating, undefined);
  const stream = client.watchPlayer(brun.apiKey, { keepAliveMs: 1000 });
  try {
    for await (const message of stream) {
      assert.equal(message.message.case, "keepAlive");
      break;
    }
  } finally {
    stream.close();
  }
});

test("the player stream resumes after a reconnect, losing and repeating nothing", async () => {
  const ada = await client.registerPlayer(unique("Ada"));
  const brun = await client.registerPlayer(unique("Brun"));
  const resumes: PlayerResumeInfo[] = [];
  let opened = 0;
  const stream = client.watchPlayer(ada.apiKey, {
    keepAliveMs: 1000,
    onResume: (r) => resumes.push(r),
    onOpen: () => opened++,
  });
  const messages = stream[Symbol.asyncIterator]();
  try {
    // The first message is awaited while the game is created: the stream
    // is open by the time the creation is stored.
    const pending = nextOf(messages, "gameStarted");
    await waitUntil(() => opened === 1);
    const first = await agreedGame(client, [ada, brun]);
    const started = await pending;
    assert.equal(started.message.case === "gameStarted" && started.message.value.game?.name, first);
    const decided = await nextOf(messages, "decision");
    const decision = decided.message.value as pb.PlayerDecision;
    assert.equal(decision.game, first);
    assert.equal(decision.seat, 0);
    const before = stream.position;
    assert.ok(before > 0n);

    // The connection drops; meanwhile two more games are agreed and start
    // (Brun's challenge, then Ada's), and Ada plays her first decision of
    // the first game elsewhere.
    stream.reconnect();
    const second = await agreedGame(client, [brun, ada]);
    const third = await agreedGame(client, [ada, brun]);
    await client.act(first, ada.apiKey, decision.legal!.version, decision.legal!.actions[0]!);

    // The new stream opens with a snapshot of the decisions pending;
    // dropped again right after it, it resumes from the position before the
    // first drop still: a snapshot does not move it.
    const snapshot = (await messages.next()).value as pb.WatchPlayerResponse;
    assert.ok(snapshot.snapshot);
    assert.equal(snapshot.message.case, "decision");
    assert.equal(stream.position, before);
    stream.reconnect();

    // After the reconnection: the snapshot's decisions Ada has not seen,
    // then every message after the last position seen, once.
    const seen: string[] = [`decision ${(snapshot.message.value as pb.PlayerDecision).game}`];
    const done = () =>
      seen.includes(`gameStarted ${second}`) &&
      seen.includes(`gameStarted ${third}`) &&
      seen.includes(`decision ${first}`) &&
      seen.includes(`decision ${third}`);
    // Keep-alives come every second: a lost message fails here, not by
    // the test's timeout.
    const deadline = Date.now() + 20_000;
    while (!done()) {
      assert.ok(Date.now() < deadline, `missing after the reconnection: ${seen.join(", ")}`);
      const next = await messages.next();
      assert.equal(next.done, false);
      const message = next.value as pb.WatchPlayerResponse;
      const body = message.message;
      if (body.case === "keepAlive") continue;
      if (!message.snapshot)
        assert.ok(message.position > before, "nothing from before the reconnection again");
      const game =
        body.case === "decision"
          ? body.value.game
          : body.case === "roundPaired"
            ? ""
            : body.case === "challenge"
              ? // The game's challenge: its game and status.
                `${body.value.game || "-"} ${pb.ChallengeStatus[body.value.status]}`
              : (body.value?.game?.name ?? "");
      seen.push(`${body.case} ${game}`);
    }
    // Anything more would be a repeat: the next message is a keep-alive.
    const more = await messages.next();
    assert.equal((more.value as pb.WatchPlayerResponse).message.case, "keepAlive");
    assert.deepEqual(
      resumes.map((r) => [r.why, r.afterPosition]),
      [
        ["reconnect", before],
        ["reconnect", before],
      ],
    );
    assert.equal(stream.resumes, 2);
    assert.equal(opened, 3);
    assert.deepEqual(
      seen.filter((s) => s.startsWith("gameStarted")).sort(),
      [`gameStarted ${second}`, `gameStarted ${third}`].sort(),
    );
    // The first game's new decision (its follower decision) and the third
    // game's first one, each once: no decision is lost or repeated.
    assert.deepEqual(
      seen.filter((s) => s.startsWith("decision")).sort(),
      [`decision ${first}`, `decision ${third}`].sort(),
    );
    // Each of the two challenges made meanwhile, open then accepted with
    // its game, once each.
    assert.deepEqual(
      seen.filter((s) => s.startsWith("challenge")),
      ["challenge - OPEN", `challenge ${second} ACCEPTED`, "challenge - OPEN", `challenge ${third} ACCEPTED`],
    );
  } finally {
    stream.close();
    await messages.return?.();
  }
});

test("the player stream tells each stage of a challenge once across reconnects", async () => {
  // A challenge waiting for the player is in every opening snapshot, and its
  // events after the position resumed from may be older than the snapshot:
  // the stream yields each stage once, in order.
  const ada = await client.registerPlayer(unique("Ada"));
  const brun = await client.registerPlayer(unique("Brun"));
  const cleo = await client.registerPlayer(unique("Cleo"));
  let opened = 0;
  const stream = client.watchPlayer(ada.apiKey, { keepAliveMs: 1000, onOpen: () => opened++ });
  const messages = stream[Symbol.asyncIterator]();
  const told: string[] = [];
  // Records the challenge messages up to the next keep-alive: by then the
  // stream has brought everything before it.
  const untilQuiet = async () => {
    for (;;) {
      const next = await messages.next();
      assert.equal(next.done, false);
      const message = next.value as pb.WatchPlayerResponse;
      const body = message.message;
      if (body.case === "keepAlive") return;
      assert.equal(body.case, "challenge");
      const challenge = body.value as pb.Challenge;
      const taken = challenge.seats.filter((s) => s.accepted).length;
      told.push(`${pb.ChallengeStatus[challenge.status]} ${taken}${message.snapshot ? " snapshot" : ""}`);
    }
  };
  try {
    const quiet = untilQuiet();
    await waitUntil(() => opened === 1);
    const offer = await client.createChallenge(brun.apiKey, [brun.name, ada.name, cleo.name]);
    await quiet;
    assert.deepEqual(told, ["OPEN 1"]);
    // Cleo accepts while Ada's connection is down: the new snapshot shows
    // the challenge as it is now, and the events after the last position
    // seen bring Cleo's acceptance again.
    stream.reconnect();
    await client.acceptChallenge(offer.name, cleo.apiKey);
    await untilQuiet();
    assert.deepEqual(told.slice(1), ["OPEN 2 snapshot"]);
    // Down again with nothing new: the snapshot repeats it.
    stream.reconnect();
    await untilQuiet();
    assert.deepEqual(told.slice(2), []);
    // Ada accepts: the game starts.
    await client.acceptChallenge(offer.name, ada.apiKey);
    const accepted = (await messages.next()).value as pb.WatchPlayerResponse;
    assert.equal(accepted.message.case, "challenge");
    const challenge = accepted.message.value as pb.Challenge;
    assert.equal(challenge.status, pb.ChallengeStatus.ACCEPTED);
    assert.ok(challenge.game);
    const started = await nextOf(messages, "gameStarted");
    assert.equal(started.message.case === "gameStarted" && started.message.value.game?.name, challenge.game);
    assert.equal(stream.resumes, 2);
  } finally {
    stream.close();
    await messages.return?.();
  }
});

test("a registered bot plays many games over one stream through reconnects", async () => {
  // Two bots play six games without clocks: a decision lost in a
  // reconnection would stall its game forever.
  const ada = await client.registerPlayer(unique("Ada"));
  const brun = await client.registerPlayer(unique("Brun"));
  const games = 6;
  let adaBot: RegisteredBot;
  // Ada's connection drops after every 40 of her actions, mid-game.
  const drop = (message: pb.WatchPlayerResponse) => {
    if (message.message.case === "decision" && adaBot.record.actions % 40 === 39) adaBot.stream.reconnect();
  };
  adaBot = new RegisteredBot(client, ada.apiKey, randomPolicy(seededRandom(1)), { onMessage: drop });
  const brunBot = new RegisteredBot(client, brun.apiKey, randomPolicy(seededRandom(2)));
  const runs = [adaBot.run({ games }), brunBot.run({ games })];
  try {
    await Promise.all([adaBot.listening, brunBot.listening]);
    const names: string[] = [];
    for (let n = 0; n < games; n++) {
      names.push(await agreedGame(client, n % 2 === 0 ? [ada, brun] : [brun, ada]));
    }
    await Promise.all(runs);
    assert.ok(adaBot.stream.resumes >= 3, `Ada's stream was reconnected mid-way: ${adaBot.stream.resumes}`);
    assert.deepEqual([...adaBot.record.ended.keys()].sort(), [...names].sort());
    assert.deepEqual([...adaBot.record.started].sort(), [...names].sort());
    // Every action of Ada's seats is one she answered from her stream, once.
    let stored = 0;
    for (const name of names) {
      const game = adaBot.record.ended.get(name)!;
      assert.equal(game.status, pb.GameStatus.FINISHED);
      assert.equal(game.ending?.reason, pb.EndReason.NORMAL);
      const seat = game.players.find((p) => p.account === ada.name)!.seat;
      for await (const message of client.watchGame(name, { fromVersion: 1n })) {
        if (message.message.case === "event" && message.message.value.event?.seat === seat) stored++;
      }
    }
    assert.equal(stored, adaBot.record.actions);
    assert.equal(adaBot.record.movedOn.size, 0);
    assert.equal(adaBot.record.decisions.size, adaBot.record.actions);
  } finally {
    adaBot.stop();
    brunBot.stop();
    await Promise.allSettled(runs);
  }
});

test("a registered bot plays on across a restart of the server", async () => {
  const ada = await client.registerPlayer(unique("Ada"));
  const brun = await client.registerPlayer(unique("Brun"));
  const created = await agreedGame(client, [ada, brun]);
  // Slow enough that the game is still running at the restart; patient
  // enough to wait for the server to be back.
  const slowly = (seed: number) => {
    const pick = randomPolicy(seededRandom(seed));
    return async (decision: Parameters<typeof pick>[0]) => {
      await new Promise((r) => setTimeout(r, 10));
      return pick(decision);
    };
  };
  const retry = { attempts: 100, initialBackoffMs: 20, maxBackoffMs: 200 };
  const patient = new GameClient(client.transport, { retry });
  const bots = [
    new RegisteredBot(patient, ada.apiKey, slowly(1), { retry }),
    new RegisteredBot(patient, brun.apiKey, slowly(2), { retry }),
  ];
  const runs = bots.map((bot) => bot.run({ games: 1 }));
  try {
    await waitUntil(() => bots[0]!.record.actions >= 10);
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
    server = await server.restart();
    await Promise.all(runs);
    for (const bot of bots) {
      assert.deepEqual([...bot.record.ended.keys()], [created], "each saw the game end");
      assert.ok(bot.stream.resumes >= 1);
    }
    assert.equal(bots[0]!.record.ended.get(created)?.ending?.reason, pb.EndReason.NORMAL);
  } finally {
    for (const bot of bots) bot.stop();
    await Promise.allSettled(runs);
  }
});

async function waitUntil(condition: () => boolean, withinMs = 30_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    assert.ok(Date.now() < deadline, "waited too long");
    await new Promise((r) => setTimeout(r, 10));
  }
}
