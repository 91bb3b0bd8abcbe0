// A bot that creates a game and plays every seat at random to the end:
//
//   carcassonne-bot --addr 127.0.0.1:50051 --players 4 [--river] [--count]
//                   [--seed N] [--spectator-delay N] [--grpc-web]
//
// With --seed, the game's draw order is derived from the same number (as
// the Python bot derives it), so a run replays exactly against the same
// server version.

import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import { GameClient, ruleOptions } from "./client.js";
import { GameError } from "./errors.js";
import { baseUrl, connect } from "./node.js";
import type { Game } from "./pb.js";
import { playRandomGame, seededRandom } from "./play.js";
import { connectWeb } from "./web.js";

const USAGE = `usage: carcassonne-bot [--addr HOST:PORT] [--players 2..5] [--river] [--count]
                       [--seed N] [--spectator-delay N] [--grpc-web]

Create a game and play it to the end with random legal actions.

  --addr HOST:PORT       the server (default 127.0.0.1:50051)
  --players N            number of bots, 2 to 5 (default 2)
  --river                play with the River
  --count                play with the Count of Carcassonne
  --seed N               seed of the bots' choices and of the draw order (default: random)
  --spectator-delay N    spectators see the game N events behind (default 0)
  --grpc-web             talk grpc-web over HTTP/1.1, as a browser does, instead of gRPC`;

/** The 32-byte draw seed, as 64 hex digits, that --seed N stands for. */
export function gameSeed(seed: number): string {
  return createHash("sha256").update(`carcassonne-client bot seed ${seed}`).digest("hex");
}

/** True when the revealed seed hashes to the SHA-256 published at the
 * game's creation, i.e. nobody chose the draw order afterwards. */
export function seedMatchesCommitment(game: Game): boolean {
  if (!/^[0-9a-f]{64}$/.test(game.seed)) return false;
  return createHash("sha256").update(Buffer.from(game.seed, "hex")).digest("hex") === game.seedSha256;
}

/** The final scores and winners, for people. */
export function formatResult(game: Game, steps: number): string {
  const winners = new Set(game.winners);
  const width = Math.max(...game.players.map((p) => p.name.length));
  const lines = [`${game.name} finished after ${steps} actions (version ${game.version})`];
  for (const p of game.players) {
    const mark = winners.has(p.seat) ? "  winner" : "";
    lines.push(`  seat ${p.seat}  ${p.name.padEnd(width)}  ${String(p.score).padStart(4)}${mark}`);
  }
  lines.push(
    `winners: ${game.players
      .filter((p) => winners.has(p.seat))
      .map((p) => p.name)
      .join(", ")}`,
  );
  const verdict = seedMatchesCommitment(game) ? "matches" : "DOES NOT MATCH";
  lines.push(`seed ${game.seed} ${verdict} its commitment ${game.seedSha256}`);
  return lines.join("\n");
}

interface BotArgs {
  addr: string;
  players: number;
  river: boolean;
  count: boolean;
  seed: number | undefined;
  spectatorDelay: number;
  grpcWeb: boolean;
}

function integer(text: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag}: expected an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return n;
}

class UsageError extends Error {}

export function parseBotArgs(argv: string[]): BotArgs | "help" {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      addr: { type: "string", default: "127.0.0.1:50051" },
      players: { type: "string", default: "2" },
      river: { type: "boolean", default: false },
      count: { type: "boolean", default: false },
      seed: { type: "string" },
      "spectator-delay": { type: "string", default: "0" },
      "grpc-web": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return "help";
  return {
    addr: values.addr,
    players: integer(values.players, "--players", 2, 5) ?? 2,
    river: values.river,
    count: values.count,
    seed: integer(values.seed, "--seed", 0, 2 ** 32 - 1),
    spectatorDelay: integer(values["spectator-delay"], "--spectator-delay", 0, 2 ** 32 - 1) ?? 0,
    grpcWeb: values["grpc-web"],
  };
}

/** The bot's command line; the process's exit code. */
export async function main(argv: string[]): Promise<number> {
  let args: BotArgs | "help";
  try {
    args = parseBotArgs(argv);
  } catch (error) {
    console.error(`carcassonne-bot: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (args === "help") {
    console.log(USAGE);
    return 0;
  }
  const client: GameClient = args.grpcWeb ? connectWeb(baseUrl(args.addr)) : connect(args.addr);
  const players = Array.from({ length: args.players }, (_, seat) => `Bot ${seat}`);
  try {
    const created = await client.createGame(players, {
      rules: ruleOptions({ river: args.river, count: args.count }),
      spectatorDelay: args.spectatorDelay,
      ...(args.seed === undefined ? {} : { seed: gameSeed(args.seed) }),
    });
    console.log(`created ${created.name} for ${args.players} players`);
    const random = args.seed === undefined ? undefined : seededRandom(args.seed);
    const { game, steps } = await playRandomGame(client, created, random ? { random } : {});
    console.log(formatResult(game, steps));
    return 0;
  } catch (error) {
    const text = error instanceof GameError || error instanceof Error ? error.message : String(error);
    console.error(`error: ${text}`);
    return 1;
  }
}
