// Challenges against the real server: how registered players agree to a
// game (offer, accept, decline, cancel, seeks), and registered bots that
// accept the challenges naming their player, or leave them to a person.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  Code,
  GameClient,
  newRequestId,
  pb,
  randomPolicy,
  Reason,
  RegisteredBot,
  seededRandom,
  timeControl,
} from "../src/index.js";
import { connect } from "../src/node.js";
import { assertReason, rejection } from "./support/games.js";
import { ADMIN_KEY, unique } from "./support/league.js";
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

async function players(...names: string[]) {
  const registered = [];
  for (const name of names) registered.push(await client.registerPlayer(unique(name)));
  return registered;
}

const namesOf = (challenges: pb.Challenge[]) => challenges.map((c) => c.name);

test("a named player accepts, and the game starts with everyone in their seats", async () => {
  const [ada, brun, cleo] = await players("Ada", "Brun", "Cleo");
  const requestId = newRequestId();
  const offer = await client.createChallenge(ada!.apiKey, [ada!.name, brun!.name], {
    rated: true,
    requestId,
  });
  assert.equal(offer.status, pb.ChallengeStatus.OPEN);
  assert.equal(offer.challenger, ada!.name);
  assert.deepEqual(
    offer.seats.map((s) => [s.player, s.accepted]),
    [
      [ada!.name, true],
      [brun!.name, false],
    ],
  );
  assert.ok(offer.rated);
  assert.equal(offer.game, "");
  const lastsMs = Number(offer.expireTimeMs - offer.createTimeMs);
  assert.ok(Math.abs(lastsMs - 3_600_000) < 10_000, `an hour by default: ${lastsMs}`);
  // A retry is the same challenge; the bare id names it too.
  const again = await client.createChallenge(ada!.apiKey, [ada!.name, brun!.name], {
    rated: true,
    requestId,
  });
  assert.equal(again.name, offer.name);
  assert.deepEqual(await client.getChallenge(offer.name.replace(/^challenges\//, "")), offer);
  // Listed for the two players in it, not for Cleo, nor without a key.
  assert.ok(namesOf(await client.listChallenges(brun!.apiKey)).includes(offer.name));
  assert.ok(namesOf(await client.listChallenges(ada!.apiKey)).includes(offer.name));
  assert.ok(!namesOf(await client.listChallenges(cleo!.apiKey)).includes(offer.name));
  assert.ok(!namesOf(await client.listChallenges()).includes(offer.name));
  // Nobody takes Brun's seat but Brun; the challenger holds hers already.
  assertReason(
    await rejection(() => client.acceptChallenge(offer.name, cleo!.apiKey)),
    Code.PermissionDenied,
    Reason.NOT_INVITED,
  );
  assertReason(
    await rejection(() => client.acceptChallenge(offer.name, ada!.apiKey)),
    Code.FailedPrecondition,
    Reason.ALREADY_SEATED,
  );
  const accepted = await client.acceptChallenge(offer.name, brun!.apiKey);
  assert.equal(accepted.status, pb.ChallengeStatus.ACCEPTED);
  assert.ok(accepted.seats.every((s) => s.accepted));
  const game = await client.getGame(accepted.game);
  assert.ok(game.rated);
  assert.deepEqual(
    game.players.map((p) => p.account),
    [ada!.name, brun!.name],
  );
  assert.deepEqual(await client.getChallenge(offer.name), accepted);
  // Once started, it is closed: no more listed, nor accepted.
  assert.ok(!namesOf(await client.listChallenges(brun!.apiKey)).includes(offer.name));
  assertReason(
    await rejection(() => client.acceptChallenge(offer.name, brun!.apiKey)),
    Code.FailedPrecondition,
    Reason.CHALLENGE_CLOSED,
  );
  // The players act in it with their keys.
  const legal = await client.legalActions(accepted.game, ada!.apiKey);
  await client.act(accepted.game, ada!.apiKey, legal.version, legal.actions[0]!);
});

test("a challenge is declined by its named player or cancelled by its challenger", async () => {
  const [ada, brun, cleo] = await players("Ada", "Brun", "Cleo");
  const declined = await client.createChallenge(ada!.apiKey, [ada!.name, brun!.name]);
  assertReason(
    await rejection(() => client.declineChallenge(declined.name, cleo!.apiKey)),
    Code.PermissionDenied,
    Reason.NOT_INVITED,
  );
  assertReason(
    await rejection(() => client.declineChallenge(declined.name, ada!.apiKey)),
    Code.FailedPrecondition,
    Reason.CHALLENGER_DECLINES,
  );
  const answer = await client.declineChallenge(declined.name, brun!.apiKey);
  assert.equal(answer.status, pb.ChallengeStatus.DECLINED);
  assert.equal(answer.declinedBy, brun!.name);
  assert.equal(answer.game, "");
  assertReason(
    await rejection(() => client.acceptChallenge(declined.name, brun!.apiKey)),
    Code.FailedPrecondition,
    Reason.CHALLENGE_CLOSED,
  );

  const cancelled = await client.createChallenge(ada!.apiKey, [ada!.name, brun!.name]);
  assertReason(
    await rejection(() => client.cancelChallenge(cancelled.name, brun!.apiKey)),
    Code.PermissionDenied,
    Reason.NOT_CHALLENGER,
  );
  assert.equal(
    (await client.cancelChallenge(cancelled.name, ada!.apiKey)).status,
    pb.ChallengeStatus.CANCELLED,
  );
  assert.equal((await client.getChallenge(cancelled.name)).status, pb.ChallengeStatus.CANCELLED);

  const missing = await rejection(() => client.getChallenge("challenges/nosuchchallenge"));
  assertReason(missing, Code.NotFound, Reason.CHALLENGE_NOT_FOUND);
  assert.equal(missing.metadata["name"], "challenges/nosuchchallenge");
  // Without a key of a player, nothing is offered.
  const noKey = await rejection(() => client.createChallenge("", [ada!.name, brun!.name]));
  assert.equal(noKey.code, Code.Unauthenticated);
});

test("an open seat is a seek any registered player takes", async () => {
  const [ada, dan] = await players("Ada", "Dan");
  const seek = await client.createChallenge(ada!.apiKey, [ada!.name, { open: true }, { bot: "greedy" }], {
    timeControl: timeControl({ decisionMs: 60_000 }),
    expireMs: 60_000,
  });
  assert.deepEqual(
    seek.seats.map((s) => [s.player, s.open, s.bot]),
    [
      [ada!.name, false, ""],
      ["", true, ""],
      ["", false, "greedy"],
    ],
  );
  // Anyone sees the seek, with a key or without.
  assert.ok(namesOf(await client.listChallenges()).includes(seek.name));
  assert.ok(namesOf(await client.listChallenges(dan!.apiKey)).includes(seek.name));
  // The bot's seat is no open seat.
  assertReason(
    await rejection(() => client.acceptChallenge(seek.name, dan!.apiKey, { seat: 2 })),
    Code.FailedPrecondition,
    Reason.SEAT_NOT_OPEN,
  );
  const taken = await client.acceptChallenge(seek.name, dan!.apiKey, { seat: 1 });
  assert.equal(taken.status, pb.ChallengeStatus.ACCEPTED);
  assert.equal(taken.seats[1]?.player, dan!.name);
  const game = await client.getGame(taken.game);
  assert.deepEqual(
    game.players.map((p) => [p.account, p.bot]),
    [
      [ada!.name, ""],
      [dan!.name, ""],
      ["", "greedy"],
    ],
  );
  assert.equal(game.rated, false);
});

test("a bot that accepts challenges plays the games it agreed to", async () => {
  const [ada, brun] = await players("Ada", "Brun");
  // Made before Ada's bot starts: its stream's snapshot holds it.
  const earlier = await client.createChallenge(brun!.apiKey, [brun!.name, ada!.name]);
  const adaBot = new RegisteredBot(client, ada!.apiKey, randomPolicy(seededRandom(1)), {
    acceptChallenges: true,
  });
  // Brun's bot plays his seats; his own challenges need no acceptance.
  const brunBot = new RegisteredBot(client, brun!.apiKey, randomPolicy(seededRandom(2)));
  const runs = [adaBot.run({ games: 2 }), brunBot.run({ games: 2 })];
  try {
    await Promise.all([adaBot.listening, brunBot.listening]);
    // Made while it runs: told live.
    const later = await client.createChallenge(brun!.apiKey, [ada!.name, brun!.name], {
      timeControl: timeControl({ decisionMs: 60_000 }),
    });
    const [adaRecord, brunRecord] = await Promise.all(runs);
    const games: string[] = [];
    for (const offer of [earlier, later]) {
      const challenge = await client.getChallenge(offer.name);
      assert.equal(challenge.status, pb.ChallengeStatus.ACCEPTED);
      games.push(challenge.game);
    }
    assert.deepEqual(adaRecord!.accepted, [earlier.name, later.name]);
    assert.deepEqual(brunRecord!.accepted, []);
    assert.deepEqual([...adaRecord!.ended.keys()].sort(), [...games].sort());
    assert.deepEqual([...brunRecord!.ended.keys()].sort(), [...games].sort());
    for (const name of games) {
      const game = adaRecord!.ended.get(name)!;
      assert.equal(game.status, pb.GameStatus.FINISHED);
      assert.equal(game.ending?.reason, pb.EndReason.NORMAL);
      assert.deepEqual(game.players.map((p) => p.account).sort(), [ada!.name, brun!.name].sort());
    }
    assert.equal(adaRecord!.movedOn.size, 0);
    assert.ok(adaRecord!.actions > 0);
  } finally {
    adaBot.stop();
    brunBot.stop();
    await Promise.allSettled(runs);
  }
});

test("a bot without the option leaves the challenge to a person", async () => {
  const [ada, brun] = await players("Ada", "Brun");
  const told: pb.Challenge[] = [];
  const bot = new RegisteredBot(client, ada!.apiKey, randomPolicy(), {
    onMessage: (m) => {
      if (m.message.case === "challenge") told.push(m.message.value);
    },
  });
  // It stops once the challenge has reached it and been handled.
  const run = bot.run({ until: () => told.length > 0 });
  try {
    await bot.listening;
    const offer = await client.createChallenge(brun!.apiKey, [brun!.name, ada!.name]);
    const record = await run;
    assert.deepEqual(namesOf(told), [offer.name]);
    assert.deepEqual(record.accepted, []);
    assert.equal(record.challenges.size, 0);
    const still = await client.getChallenge(offer.name);
    assert.equal(still.status, pb.ChallengeStatus.OPEN);
    assert.deepEqual(
      still.seats.map((s) => s.accepted),
      [true, false],
    );
    await client.cancelChallenge(offer.name, brun!.apiKey);
  } finally {
    bot.stop();
    await Promise.allSettled([run]);
  }
});
