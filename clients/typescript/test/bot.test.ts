// The bot's command line, `carcassonne-bot`, against the real server.

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pb, timeControl, type GameClient } from "../src/index.js";
import { connect } from "../src/node.js";
import { ADMIN_KEY, agreedGame, organiser, unique } from "./support/league.js";
import { Server } from "./support/server.js";

// From dist/test/: the package's bin/.
const BOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../bin/carcassonne-bot.js");
const run = promisify(execFile);

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

async function bot(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BOT, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

test("the bot plays a whole game and prints the scores, the winners and the checked seed", async () => {
  const args = ["--addr", server.addr, "--players", "4", "--river", "--count", "--seed", "11"];
  const first = await bot(...args);
  assert.equal(first.code, 0, first.stderr);
  const lines = first.stdout.trim().split("\n");
  assert.match(lines[0]!, /^created games\/\S+ for 4 players$/);
  assert.match(lines[1]!, /^games\/\S+ finished after \d+ actions \(version \d+\)$/);
  assert.equal(lines[2], "ending: NORMAL: the last tile was played");
  assert.equal(
    lines.filter((l) => /^ {2}seat \d {2}Bot \d +\d+ {2}rank [1-4]( {2}winner)?$/.test(l)).length,
    4,
  );
  assert.match(lines.at(-2)!, /^winners: Bot \d(, Bot \d)*$/);
  assert.match(lines.at(-1)!, /^seed [0-9a-f]{64} matches its commitment [0-9a-f]{64}$/);

  // The same seed replays the same game (in a game of another name).
  const again = await bot(...args);
  assert.equal(again.code, 0, again.stderr);
  const unnamed = (out: string) => out.replace(/games\/\S+/g, "games/_");
  assert.equal(unnamed(again.stdout), unnamed(first.stdout));
});

test("the bot plays over grpc-web too", async () => {
  const out = await bot("--addr", server.addr, "--players", "2", "--grpc-web");
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /finished after \d+ actions/);
  assert.match(out.stdout, / matches its commitment /);
});

test("a bad argument is exit 2 with the usage", async () => {
  const out = await bot("--players", "6");
  assert.equal(out.code, 2);
  assert.match(out.stderr, /--players: expected an integer from 2 to 5, got "6"/);
  assert.match(out.stderr, /^usage: carcassonne-bot/m);
});

test("--help prints the usage; a negative number is refused before any call", async () => {
  const out = await bot("--addr", server.addr, "--spectator-delay", "-1");
  assert.equal(out.code, 2);
  const help = await bot("--help");
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: carcassonne-bot/);
  assert.match(help.stdout, /--main-ms MS/);
  assert.match(help.stdout, /--resign-after N/);
});

test("bad clock and resignation arguments are exit 2; a time control the server refuses is exit 1", async () => {
  for (const [args, message] of [
    [["--main-ms=-5"], /--main-ms: expected an integer from 0 to/],
    [["--on-timeout", "lose"], /--on-timeout: expected forfeit or auto, got "lose"/],
    [["--resign-after", "2"], /--resign-after needs --resign-seat/],
    [["--players", "2", "--resign-seat", "2"], /--resign-seat: expected an integer from 0 to 1/],
  ] as const) {
    const out = await bot("--addr", server.addr, ...args);
    assert.equal(out.code, 2, args.join(" "));
    assert.match(out.stderr, message);
  }
  // Neither a main time nor a limit: the server says why.
  const out = await bot("--addr", server.addr, "--on-timeout", "auto");
  assert.equal(out.code, 1);
  assert.match(out.stderr, /^error: INVALID_ARGUMENT INVALID_ARGUMENT: time_control.* field=time_control$/m);
});

/** The game the bot's output names, as the server has it now. */
async function gameOf(stdout: string): Promise<pb.Game> {
  const name = /^(games\/\S+) finished after \d+ actions/m.exec(stdout)?.[1];
  assert.ok(name, stdout);
  return client.getGame(name);
}

const seatLines = (stdout: string) => stdout.split("\n").filter((l) => l.startsWith("  seat "));

test("the bot plays a clocked game and shows each seat's time left", async () => {
  const clock = ["--main-ms", "120000", "--increment-ms", "1000", "--decision-ms", "30000"];
  const out = await bot("--addr", server.addr, "--players", "3", "--seed", "5", ...clock);
  assert.equal(out.code, 0, out.stderr);
  assert.doesNotMatch(out.stderr, /too late/);
  const game = await gameOf(out.stdout);
  assert.deepEqual(
    [game.timeControl?.mainMs, game.timeControl?.incrementMs, game.timeControl?.decisionMs],
    [120_000, 1_000, 30_000],
  );
  assert.equal(game.timeControl?.onTimeout, pb.TimeoutRule.FORFEIT);
  assert.equal(game.ending?.reason, pb.EndReason.NORMAL);
  assert.match(out.stdout, /^ending: NORMAL: the last tile was played$/m);
  const lines = seatLines(out.stdout);
  assert.equal(lines.length, 3);
  game.players.forEach((player, i) => {
    const parsed = / {2}rank (\d+) {2}(\d+\.\d) s left( {2}winner)?$/.exec(lines[i]!);
    assert.ok(parsed, lines[i]);
    assert.equal(Number(parsed[1]), player.rank);
    assert.equal(parsed[2], (Number(player.timeLeftMs) / 1000).toFixed(1));
  });
});

test("a seat of the bot resigns after its actions", async () => {
  const out = await bot("--addr", server.addr, "--players", "2", "--resign-seat", "1", "--resign-after", "2");
  assert.equal(out.code, 0, out.stderr);
  const game = await gameOf(out.stdout);
  assert.equal(game.ending?.reason, pb.EndReason.RESIGNED);
  assert.equal(game.ending?.seat, 1);
  // Seat 0: tile, follower; seat 1: tile, follower; seat 0 again; seat 1 resigns.
  assert.match(out.stdout, / finished after 7 actions /);
  assert.match(out.stdout, /^ending: RESIGNED: seat 1 \(Bot 1\) resigned$/m);
  const [first, second] = seatLines(out.stdout);
  assert.match(first!, / {2}rank 1 {2}winner$/);
  assert.match(second!, / {2}rank 2 {2}resigned$/);
  assert.match(out.stdout, /^winners: Bot 0$/m);
});

test("the bot thinks no closer to a deadline than its margin", async () => {
  // Each decision has 1300 ms; the bot would think for a minute, but
  // answers 1000 ms before the deadline: about 300 ms a decision, over
  // the 6 decisions before seat 1 resigns.
  const started = Date.now();
  const out = await bot(
    ...["--addr", server.addr, "--players", "2", "--decision-ms", "1300", "--think-ms", "60000"],
    ...["--margin-ms", "1000", "--resign-seat", "1", "--resign-after", "2"],
  );
  const elapsed = Date.now() - started;
  assert.equal(out.code, 0, out.stderr);
  assert.doesNotMatch(out.stderr, /too late/);
  const game = await gameOf(out.stdout);
  assert.equal(game.ending?.reason, pb.EndReason.RESIGNED);
  assert.ok(elapsed > 6 * 200 && elapsed < 20_000, `it thought for ${elapsed} ms`);
});

test("the bot reports a late answer and plays on", async () => {
  // No margin: seat 0 thinks up to its deadline, so its answer comes too
  // late. Under auto the server decides for it and the game goes on, and
  // seat 1 resigns at its first decision.
  const out = await bot(
    ...["--addr", server.addr, "--players", "2", "--decision-ms", "1500", "--on-timeout", "auto"],
    ...["--think-ms", "60000", "--margin-ms", "0", "--resign-seat", "1"],
  );
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stderr, /^seat 0 answered too late at version 2: OUT_OF_TIME/m);
  const game = await gameOf(out.stdout);
  assert.equal(game.ending?.reason, pb.EndReason.RESIGNED);
  assert.deepEqual(game.winners, [0]);
  assert.match(out.stdout, / finished after 1 actions /);
});

test("the bot plays as a registered player until its games end", async () => {
  const ada = await client.registerPlayer(unique("Ada"));
  const bob = await client.registerPlayer(unique("Bob"));
  const dir = mkdtempSync(join(tmpdir(), "carcassonne-bot-key-"));
  try {
    const keyFile = join(dir, "bob.key");
    writeFileSync(keyFile, `${bob.apiKey}\n`);
    const bots = [
      bot("--addr", server.addr, "--key", ada.apiKey, "--games", "2", "--seed", "3"),
      bot("--addr", server.addr, "--key-file", keyFile, "--games", "2"),
    ];
    // No clock: the bots answer whenever they are up.
    const names = [await agreedGame(client, [ada, bob]), await agreedGame(client, [bob, ada])];
    for (const out of await Promise.all(bots)) {
      assert.equal(out.code, 0, out.stderr);
      for (const name of names) {
        assert.match(out.stdout, new RegExp(`^${name} ended: seat \\d rank \\d, \\d+ points \\(NORMAL`, "m"));
      }
      assert.match(out.stdout, /^played \d+ actions in 2 games ended$/m);
    }
    for (const name of names) assert.equal((await client.getGame(name)).status, pb.GameStatus.FINISHED);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the bot plays a tournament as a registered player to its final standings", async () => {
  const names = [unique("Cli0"), unique("Cli1")];
  const keys: string[] = [];
  for (const name of names) keys.push((await client.registerPlayer(name)).apiKey);
  // Created before the bots start: each finds its first decision in the
  // snapshot its stream opens with.
  const created = await client.createTournament(await organiser(client), names, {
    rounds: 1,
    timeControl: timeControl({ decisionMs: 10_000 }),
  });
  const outs = await Promise.all(
    keys.map((key) => bot("--addr", server.addr, "--key", key, "--tournament", created.name)),
  );
  for (const out of outs) {
    assert.equal(out.code, 0, out.stderr);
    assert.ok(out.stdout.includes(`${created.name} final standings:`), out.stdout);
    for (const name of names) assert.match(out.stdout, new RegExp(`^ +[12] {2}players/${name} `, "m"));
  }
  const tournament = await client.getTournament(created.name);
  assert.equal(tournament.status, pb.TournamentStatus.FINISHED);
  const game = await client.getGame(tournament.pairedRounds[0]!.tables[0]!.games[0]!.game);
  assert.equal(game.ending?.reason, pb.EndReason.NORMAL);
});

test("the registered mode refuses the options of a new game; a key of nobody is exit 1", async () => {
  const mixed = await bot("--addr", server.addr, "--key", "k", "--players", "3", "--river");
  assert.equal(mixed.code, 2);
  assert.match(mixed.stderr, /--players, --river: options of a new game, not of --key/);
  for (const alone of [["--games", "2"], ["--accept-challenges"]]) {
    const out = await bot("--addr", server.addr, ...alone);
    assert.equal(out.code, 2);
    assert.match(out.stderr, /--games, --tournament and --accept-challenges need --key or --key-file/);
  }
  const both = await bot("--addr", server.addr, "--key", "k", "--key-file", "f");
  assert.equal(both.code, 2);
  const nobody = await bot("--addr", server.addr, "--key", "not-a-key-of-anyone");
  assert.equal(nobody.code, 1);
  assert.match(nobody.stderr, /UNKNOWN_KEY/);
});

test("the bot accepts challenges when told to and plays the game", async () => {
  const ada = await client.registerPlayer(unique("Ada"));
  const bob = await client.registerPlayer(unique("Bob"));
  const bots = [
    bot("--addr", server.addr, "--key", ada.apiKey, "--games", "1", "--accept-challenges"),
    // The challenger's seat is his from the start: no acceptance.
    bot("--addr", server.addr, "--key", bob.apiKey, "--games", "1"),
  ];
  const offer = await client.createChallenge(bob.apiKey, [bob.name, ada.name]);
  const [adaOut, bobOut] = await Promise.all(bots);
  for (const out of [adaOut!, bobOut!]) assert.equal(out.code, 0, out.stderr);
  const game = (await client.getChallenge(offer.name)).game;
  assert.ok(game, "the challenge was accepted");
  assert.equal((await client.getGame(game)).status, pb.GameStatus.FINISHED);
  // Ada's bot heard of the challenge (by its stream's snapshot, or live)
  // and of her acceptance, which started the game.
  assert.ok(
    adaOut!.stdout.includes(
      `${offer.name} from ${bob.name}: ACCEPTED, seats ${bob.name} (taken), ${ada.name} (taken) -> ${game}\n`,
    ),
    adaOut!.stdout,
  );
  for (const out of [adaOut!, bobOut!]) {
    assert.match(out.stdout, new RegExp(`^${game} ended: seat \\d rank \\d, \\d+ points \\(NORMAL`, "m"));
  }
  assert.match(adaOut!.stdout, /^played \d+ actions in 1 games ended, accepted 1 challenges$/m);
  assert.match(bobOut!.stdout, /^played \d+ actions in 1 games ended$/m);
});

test("the bot leaves a challenge to a person by default", async () => {
  const ada = await client.registerPlayer(unique("Ada"));
  const bob = await client.registerPlayer(unique("Bob"));
  const offer = await client.createChallenge(bob.apiKey, [bob.name, ada.name]);
  const child = spawn(process.execPath, [BOT, "--addr", server.addr, "--key", ada.apiKey], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const watchdog = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // "close": the process exited and its output was all read.
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    // The snapshot of its stream tells it of the challenge, waiting.
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes("\n")) resolve();
      });
      child.on("exit", () => reject(new Error(`the bot exited: ${stderr}`)));
    });
    assert.ok(
      stdout.startsWith(
        `${offer.name} from ${bob.name}: OPEN, seats ${bob.name} (taken), ${ada.name} (waiting)\n`,
      ),
      stdout,
    );
    // Time to act on it, if it were to.
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal((await client.getChallenge(offer.name)).status, pb.ChallengeStatus.OPEN);
    child.kill("SIGINT");
    assert.equal(await exited, 0, stderr);
    assert.match(stdout, /^played 0 actions in 0 games ended$/m);
  } finally {
    clearTimeout(watchdog);
  }
  assert.equal((await client.getChallenge(offer.name)).status, pb.ChallengeStatus.OPEN);
  await client.cancelChallenge(offer.name, bob.apiKey);
});
