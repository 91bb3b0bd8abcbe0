// A tournament run by the real server with bots that play through the
// client's registered-bot helper, one stream each: watching it to its final
// standings, its archive, withdrawals, ratings and the refusals' reasons.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Code, GameClient, pb, Reason, timeControl } from "../src/index.js";
import { connect } from "../src/node.js";
import { assertReason, rejection } from "./support/games.js";
import { ADMIN_KEY, Bots, organiser, tarFile, tarNames, waitFor } from "./support/league.js";
import { Server } from "./support/server.js";

// Every game has a clock: a decision not made in 5 s forfeits the seat.
// The bots answer in milliseconds, so every game should end normally.
const CLOCK = timeControl({ decisionMs: 5_000 });

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

/** Every message of WatchTournament, to its end. */
async function followToTheEnd(name: string): Promise<pb.WatchTournamentResponse[]> {
  const messages: pb.WatchTournamentResponse[] = [];
  for await (const message of client.watchTournament(name, { signal: AbortSignal.timeout(100_000) })) {
    messages.push(message);
  }
  assert.ok(messages.length > 0, "the stream starts with the tournament now");
  return messages;
}

test("a Swiss of four bots runs to its final standings and exports its archive", async () => {
  const bots = await Bots.start(client, 4);
  try {
    const boss = await organiser(client);
    // A bot is no organiser.
    const refused = await rejection(() =>
      client.createTournament(bots.bots[0]!.key, bots.names, { rounds: 2, timeControl: CLOCK }),
    );
    assertReason(refused, Code.PermissionDenied, Reason.NOT_ORGANISER);

    const created = await client.createTournament(boss, bots.names, {
      title: "TypeScript open",
      format: "swiss",
      rounds: 2,
      rated: true,
      timeControl: CLOCK,
    });
    assert.match(created.name, /^tournaments\//);
    assert.equal(created.status, pb.TournamentStatus.RUNNING);
    assert.equal(created.currentRound, 1);
    assert.equal(created.pairing, "pairing/1");
    assert.equal(created.pairedRounds[0]?.tables.length, 2);
    assert.equal(created.seed, "", "the seed is sealed");
    assert.equal(created.seedSha256.length, 64);
    assert.deepEqual(
      created.participants,
      bots.names.map((n) => `players/${n}`),
    );
    // Running: no archive yet.
    const running = await rejection(() => client.exportTournamentArchive(created.name));
    assertReason(running, Code.FailedPrecondition, Reason.TOURNAMENT_STATE);

    const messages = await followToTheEnd(created.name);
    const last = messages.at(-1)!;
    const tournament = last.tournament!;
    const standings = last.standings!;
    assert.deepEqual(bots.failures, []);
    assert.equal(tournament.status, pb.TournamentStatus.FINISHED);
    assert.equal(tournament.pairedRounds.length, 2);
    assert.equal(tournament.seed.length, 64, "revealed at the end");
    assert.ok(standings.final);
    assert.equal(standings.tournament, created.name);
    assert.deepEqual(
      standings.standings.map((s) => s.rank),
      [1, 2, 3, 4],
    );
    assert.deepEqual(new Set(standings.standings.map((s) => s.player)), new Set(created.participants));
    // Two rounds of two duels, 1 point to each winner.
    assert.equal(
      standings.standings.reduce((n, s) => n + s.pointsSixtieths, 0n),
      4n * 60n,
    );
    assert.ok(standings.standings.every((s) => s.games === 2));
    assert.equal(messages[0]?.standings?.final, false);
    assert.equal((await client.standings(created.name)).final, true);
    assert.equal((await client.getTournament(created.name)).status, pb.TournamentStatus.FINISHED);

    // Every game ended normally: no bot missed a decision.
    const games = tournament.pairedRounds.flatMap((r) => r.tables.flatMap((t) => t.games));
    assert.equal(games.length, 4);
    for (const g of games) {
      assert.ok(g.ended);
      const game = await client.getGame(g.game);
      assert.equal(game.ending?.reason, pb.EndReason.NORMAL, `${g.game} ended normally`);
      assert.deepEqual(
        game.players.map((p) => p.account),
        g.seats,
      );
    }
    // Each bot heard of both its rounds and of its games' ends, over its stream.
    for (const [i, bot] of bots.bots.entries()) {
      const player = `players/${bots.names[i]}`;
      const mine = games.filter((g) => g.seats.includes(player)).map((g) => g.game);
      await waitFor(() => mine.every((g) => bot.record.ended.has(g)), `${player} saw its games end`);
      assert.deepEqual(
        bot.record.rounds.map((r) => [r.tournament, r.round]),
        [
          [created.name, 1],
          [created.name, 2],
        ],
      );
      assert.ok(bot.record.rounds.every((r) => r.table.length === 2 && r.games.length === 1));
      assert.equal(bot.record.movedOn.size, 0);
      assert.ok(bot.record.actions > 0);
    }

    // The signed archive: a tar of the tournament's files and every game's.
    const archive = await client.exportTournamentArchive(created.name);
    assert.ok(archive.length > 1024);
    const names = tarNames(archive);
    for (const file of ["manifest.json", "signature", "tournament/standings.json", "ratings/events.json"]) {
      assert.ok(names.includes(file), `${file} in ${names.join(" ")}`);
    }
    for (const g of games) assert.ok(names.includes(`${g.game}/record.json`), g.game);
    const manifest = JSON.parse(new TextDecoder().decode(tarFile(archive, "manifest.json"))) as {
      kind: string;
      subject: string;
    };
    assert.equal(manifest.kind, "tournament");
    assert.equal(manifest.subject, created.name.replace("tournaments/", ""));

    // Rated: each bot played two rated duels.
    let history: pb.RatingChange[] = [];
    const deadline = Date.now() + 10_000;
    while (history.length < 2 && Date.now() < deadline) {
      history = await client.ratingHistory(bots.names[0]!);
      if (history.length < 2) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(history.length, 2, "the ratings follow the games");
    assert.ok(history.every((c) => c.pool === pb.RatingPool.DUEL));
    const board = await client.leaderboard("duel", { limit: 1000 });
    for (const p of created.participants)
      assert.ok(
        board.some((e) => e.player === p),
        p,
      );
    assert.deepEqual(
      board.map((e) => e.rank),
      board.map((_, i) => i + 1),
    );
    assert.equal((await client.getPlayer(bots.names[0]!)).duelRating?.games, 2);
    const listed: string[] = [];
    for await (const t of client.allTournaments({ pageSize: 1 })) listed.push(t.name);
    assert.ok(listed.includes(created.name));
  } finally {
    await bots.stop();
  }
});

test("house bots play a round robin alone to its end", async () => {
  const boss = await organiser(client);
  const refused = await rejection(() =>
    client.createTournament(boss, [], { houseBots: ["greedy", "grandmaster"], timeControl: CLOCK }),
  );
  assertReason(refused, Code.InvalidArgument, Reason.UNKNOWN_BOT_LEVEL);
  const created = await client.createTournament(boss, [], {
    houseBots: ["random", "random"],
    format: "round_robin",
    timeControl: CLOCK,
  });
  assert.deepEqual(created.participants, ["players/random bot 1", "players/random bot 2"]);
  assert.deepEqual(
    created.houseBots.map((b) => [b.player, b.level]),
    [
      ["players/random bot 1", "random"],
      ["players/random bot 2", "random"],
    ],
  );
  const messages = await followToTheEnd(created.name);
  const last = messages[messages.length - 1]!;
  assert.ok(last.standings?.final);
  assert.deepEqual(
    last.standings?.standings.map((s) => s.games),
    [1, 1],
  );
});

test("a withdrawn player is never paired again, and its games resign", async () => {
  const bots = await Bots.start(client, 4, "Leaver");
  try {
    const boss = await organiser(client);
    const created = await client.createTournament(boss, bots.names, {
      title: "Withdrawals",
      rounds: 2,
      timeControl: CLOCK,
    });
    const leaving = `players/${bots.names[3]}`;
    // Only the tournament's organiser withdraws a player.
    const other = await organiser(client);
    assertReason(
      await rejection(() => client.withdrawPlayer(created.name, leaving, other)),
      Code.PermissionDenied,
      Reason.NOT_ORGANISER,
    );
    const afterWithdrawal = await client.withdrawPlayer(created.name, leaving, boss);
    assert.deepEqual(afterWithdrawal.withdrawn, [leaving]);
    assertReason(
      await rejection(() => client.withdrawPlayer(created.name, leaving, boss)),
      Code.FailedPrecondition,
      Reason.TOURNAMENT_STATE,
    );
    const last = (await followToTheEnd(created.name)).at(-1)!;
    assert.deepEqual(bots.failures, []);
    assert.equal(last.tournament?.status, pb.TournamentStatus.FINISHED);
    const second = last.tournament!.pairedRounds[1]!;
    assert.ok(second.tables.every((t) => !t.players.includes(leaving)));
    assert.ok(!second.byes.includes(leaving));
    assert.ok(last.standings!.standings.find((s) => s.player === leaving)?.withdrawn);
  } finally {
    await bots.stop();
  }
});
