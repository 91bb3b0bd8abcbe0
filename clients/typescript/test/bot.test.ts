// The bot's command line, `carcassonne-bot`, against the real server.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { dirname, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Server } from "./support/server.js";

// From dist/test/: the package's bin/.
const BOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../bin/carcassonne-bot.js");
const run = promisify(execFile);

let server: Server;
before(async () => {
  server = await Server.start();
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
  assert.equal(lines.filter((l) => /^ {2}seat \d {2}Bot \d +\d+( {2}winner)?$/.test(l)).length, 4);
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
});
