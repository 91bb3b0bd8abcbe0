// Whole games played to the end by the random bot against the real server:
// every rule combination (base, River, Count, both) with 2 to 5 players.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Code, pb, playRandomGame, ruleOptions, seededRandom, type GameClient } from "../src/index.js";
import { connect } from "../src/node.js";
import { seedMatchesCommitment } from "../src/bot.js";
import { assertReason, rejection, seedOf } from "./support/games.js";
import { Server } from "./support/server.js";

let server: Server;
let client: GameClient;

before(async () => {
  server = await Server.start();
  client = connect(server.addr);
});
after(async () => {
  const exit = await server.stop();
  await server.dispose();
  assert.deepEqual(exit, { code: 0, signal: null }, "the server exits 0 on SIGTERM");
});

const COMBINATIONS = [
  { label: "base", river: false, count: false },
  { label: "river", river: true, count: false },
  { label: "count", river: false, count: true },
  { label: "river+count", river: true, count: true },
];

describe("a random bot plays a whole game", { concurrency: 2 }, () => {
  for (const rules of COMBINATIONS) {
    for (let players = 2; players <= 5; players++) {
      test(`${rules.label}, ${players} players`, async () => {
        const label = `${rules.label}-${players}`;
        const seed = seedOf(label);
        const names = Array.from({ length: players }, (_, seat) => `Bot ${seat}`);
        const created = await client.createGame(names, { rules: ruleOptions(rules), seed });
        assert.equal(created.tokens.length, players);
        assert.equal(created.game.version, 2n, "a new game is at version 2");
        assert.equal(created.game.seed, "", "the seed stays hidden while the game runs");

        const totals: number[] = Array.from({ length: players }, () => 0);
        let lastVersion = created.game.version;
        const { game, steps } = await playRandomGame(client, created, {
          random: seededRandom(players),
          onResponse: (response) => {
            for (const event of response.events) {
              assert.equal(event.version, lastVersion + 1n, "events come one version apart");
              lastVersion = event.version;
              for (const change of event.scoreChanges) {
                assert.ok(change.rule, "every score change names its rule");
                for (const seat of change.seats) totals[seat] = (totals[seat] ?? 0) + change.points;
              }
            }
            assert.equal(response.version, lastVersion);
          },
        });

        assert.ok(steps > 0);
        assert.equal(game.status, pb.GameStatus.FINISHED);
        assert.equal(game.pending?.kind, pb.DecisionKind.UNSPECIFIED);
        assert.equal(game.version, lastVersion, "the final game is at the last event's version");
        const scores = game.players.map((p) => p.score);
        assert.deepEqual(scores, totals, "the score changes add up to the final scores");
        const best = Math.max(...scores);
        assert.deepEqual(
          [...game.winners].sort(),
          game.players.filter((p) => p.score === best).map((p) => p.seat),
          "the winners are the top scorers",
        );
        assert.equal(game.seed, seed, "the seed is revealed at the end");
        assert.ok(seedMatchesCommitment(game), "the seed hashes to the commitment shown since the creation");

        const expansions = [...(game.rules?.expansions ?? [])].sort();
        assert.deepEqual(expansions, ruleOptions(rules).expansions ?? []);
        const kinds = game.tiles.map((t) => t.kind);
        assert.equal(
          kinds.includes("RS"),
          rules.river,
          "the River's spring is on the board with the River only",
        );
        assert.equal(
          kinds.some((k) => /^CO\d+$/.test(k)),
          rules.count,
          "the City of Carcassonne with the Count only",
        );

        // A finished game takes no more actions.
        const token = created.tokens[0]!;
        const error = await rejection(() =>
          client.act(created.name, token, game.version, { action: { case: "pass", value: {} } }),
        );
        assertReason(error, Code.FailedPrecondition, "GAME_FINISHED");
      });
    }
  }
});
