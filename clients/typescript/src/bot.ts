// A bot that creates a game and plays every seat at random to the end:
//
//   carcassonne-bot --addr 127.0.0.1:50051 --players 4 [--river] [--count]
//                   [--seed N] [--spectator-delay N] [--grpc-web]
//                   [--main-ms MS] [--increment-ms MS] [--decision-ms MS]
//                   [--on-timeout forfeit|auto] [--think-ms MS] [--margin-ms MS]
//                   [--resign-seat SEAT] [--resign-after N]
//
// With --seed, the game's draw order is derived from the same number (as
// the Python bot derives it), so a run replays exactly against the same
// server version. With a clock, the bot answers at once, or after thinking
// (--think-ms) at least the safety margin (--margin-ms, SAFETY_MARGIN_MS)
// before each deadline (see play.ts); a seat timed out all the same is
// reported and the game goes on as the server goes on. At the end it prints
// how the game ended, each seat's rank and main time left.
//
// A registered player:
//
//   carcassonne-bot --addr 127.0.0.1:50051 (--key KEY | --key-file FILE)
//                   [--games N] [--tournament NAME] [--seed N] [--grpc-web]
//                   [--accept-challenges]
//
// creates nothing: it opens the player's stream (WatchPlayer) and plays
// every decision that comes over it, in every game the player is seated in
// (tournament games included), with random legal actions (RegisteredBot),
// printing each round, challenge, game start and game end. It stops after
// --games N of the player's games have ended, once the tournament
// --tournament NAME is over (then it prints the final standings), or on
// Ctrl-C. With --accept-challenges it accepts the player's seat of every
// open challenge naming the player (a game with other registered players
// needs the player's consent); without it, it leaves them to a person.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  GameClient,
  ruleOptions,
  timeControl,
  type LegalActions,
  type TimeControlOptions,
} from "./client.js";
import { GameError } from "./errors.js";
import { baseUrl, connect } from "./node.js";
import {
  ChallengeStatus,
  EndReason,
  SeatStatus,
  type Challenge,
  type Game,
  type Standings,
  type WatchPlayerResponse,
} from "./pb.js";
import { playRandomGame, SAFETY_MARGIN_MS, seededRandom, type PlayOptions } from "./play.js";
import { randomPolicy, RegisteredBot, type BotRecord } from "./registered.js";
import { connectWeb } from "./web.js";

const USAGE = `usage: carcassonne-bot [--addr HOST:PORT] [--players 2..5] [--river] [--count]
                       [--seed N] [--spectator-delay N] [--grpc-web]
                       [--main-ms MS] [--increment-ms MS] [--decision-ms MS]
                       [--on-timeout forfeit|auto] [--think-ms MS] [--margin-ms MS]
                       [--resign-seat SEAT] [--resign-after N]
       carcassonne-bot [--addr HOST:PORT] (--key KEY | --key-file FILE)
                       [--games N] [--tournament NAME] [--seed N] [--grpc-web]
                       [--accept-challenges]

Create a game and play it to the end with random legal actions; or, with
--key, play every game of a registered player.

  --addr HOST:PORT       the server (default 127.0.0.1:50051)
  --players N            number of bots, 2 to 5 (default 2)
  --river                play with the River
  --count                play with the Count of Carcassonne
  --seed N               seed of the bots' choices and of the draw order (default: random)
  --spectator-delay N    spectators see the game N events behind (default 0)
  --grpc-web             talk grpc-web over HTTP/1.1, as a browser does, instead of gRPC

Clocks (rules T-1 to T-11); without the first four, no clock runs:
  --main-ms MS           each seat's main time
  --increment-ms MS      added to a seat's main time each time it hands the game over
  --decision-ms MS       the limit per decision
  --on-timeout RULE      forfeit (the seat goes out) or auto (the server decides for it);
                         default forfeit
  --think-ms MS          pause before each answer, cut short by the margin (default 0)
  --margin-ms MS         send each answer at least this long before its deadline
                         (default ${SAFETY_MARGIN_MS})

Resigning (for demos and tests):
  --resign-seat SEAT     this seat resigns...
  --resign-after N       ...at its first decision after N actions of its own (default 0)

A registered player: play every game of the player, over its stream, instead of
creating a game (the options of a new game do not go with these):
  --key KEY              the player's API key
  --key-file FILE        a file whose first line is the player's API key
  --games N              stop once N of the player's games have ended (default: play on)
  --tournament NAME      stop once this tournament (tournaments/ID) is over, and print
                         its standings
  --accept-challenges    accept the player's seat of every challenge naming the player,
                         then play the game (default: leave challenges to a person)`;

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

/** How the game ended (`Game.ending`), for people, after the reason's
 * name: "RESIGNED: seat 1 (Bot 1) resigned". */
export function formatEnding(game: Game): string {
  const reason = game.ending?.reason ?? EndReason.UNSPECIFIED;
  const seat = game.ending?.seat ?? 0;
  const who = `seat ${seat} (${game.players.find((p) => p.seat === seat)?.name ?? "?"})`;
  switch (reason) {
    case EndReason.NORMAL:
      return "NORMAL: the last tile was played";
    case EndReason.OUT_OF_TIME:
      return `OUT_OF_TIME: ${who} ran out of time`;
    case EndReason.RESIGNED:
      return `RESIGNED: ${who} resigned`;
    case EndReason.ABORTED:
      return `ABORTED: ${who} aborted the game, which has no result`;
    default:
      return `${EndReason[reason] ?? reason}: (unknown to this bot)`;
  }
}

const OUT: Partial<Record<SeatStatus, string>> = {
  [SeatStatus.OUT_OF_TIME]: "out of time",
  [SeatStatus.RESIGNED]: "resigned",
};

/** How the game ended, the final scores, ranks, main time left and
 * winners, for people. */
export function formatResult(game: Game, steps: number): string {
  const winners = new Set(game.winners);
  const width = Math.max(...game.players.map((p) => p.name.length));
  const lines = [
    `${game.name} finished after ${steps} actions (version ${game.version})`,
    `ending: ${formatEnding(game)}`,
  ];
  for (const p of game.players) {
    const rank = p.rank ? `rank ${p.rank}` : "rank -";
    const left = p.timeLeftMs === undefined ? "" : `  ${(Number(p.timeLeftMs) / 1000).toFixed(1)} s left`;
    const out = OUT[p.status] ? `  ${OUT[p.status]}` : "";
    const mark = winners.has(p.seat) ? "  winner" : "";
    lines.push(
      `  seat ${p.seat}  ${p.name.padEnd(width)}  ${String(p.score).padStart(4)}  ${rank}${left}${out}${mark}`,
    );
  }
  const names = game.players
    .filter((p) => winners.has(p.seat))
    .map((p) => p.name)
    .join(", ");
  lines.push(`winners: ${names || "none"}`);
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
  /** Undefined: no clock. */
  clock: TimeControlOptions | undefined;
  thinkMs: number;
  marginMs: number;
  resign: { seat: number; after: number } | undefined;
}

/** The longest duration the API takes (30 days, rule T-1) */
const MAX_MS = 2_592_000_000;

function integer(text: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag}: expected an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return n;
}

class UsageError extends Error {}

/** The options of a registered player's bot (--key). */
interface PlayerArgs {
  addr: string;
  grpcWeb: boolean;
  /** The key, or the file it is in. */
  key: { given: string } | { file: string };
  games: number | undefined;
  tournament: string | undefined;
  seed: number | undefined;
  acceptChallenges: boolean;
}

/** The options that describe the game the bot creates. */
const GAME_OPTIONS = [
  "players",
  "river",
  "count",
  "spectator-delay",
  "main-ms",
  "increment-ms",
  "decision-ms",
  "on-timeout",
  "think-ms",
  "margin-ms",
  "resign-seat",
  "resign-after",
] as const;

export function parseBotArgs(argv: string[]): BotArgs | PlayerArgs | "help" {
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
      "main-ms": { type: "string" },
      "increment-ms": { type: "string" },
      "decision-ms": { type: "string" },
      "on-timeout": { type: "string" },
      "think-ms": { type: "string", default: "0" },
      "margin-ms": { type: "string", default: String(SAFETY_MARGIN_MS) },
      "resign-seat": { type: "string" },
      "resign-after": { type: "string" },
      key: { type: "string" },
      "key-file": { type: "string" },
      games: { type: "string" },
      tournament: { type: "string" },
      "accept-challenges": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return "help";
  const { key, "key-file": keyFile } = values;
  if (key !== undefined || keyFile !== undefined) {
    if (key !== undefined && keyFile !== undefined) throw new UsageError("--key and --key-file: one of them");
    const defaults: Record<string, unknown> = {
      players: "2",
      river: false,
      count: false,
      "spectator-delay": "0",
      "think-ms": "0",
      "margin-ms": String(SAFETY_MARGIN_MS),
    };
    const creating = GAME_OPTIONS.filter((o) => values[o] !== defaults[o]).map((o) => `--${o}`);
    if (creating.length > 0) {
      throw new UsageError(`${creating.join(", ")}: options of a new game, not of --key`);
    }
    return {
      addr: values.addr,
      grpcWeb: values["grpc-web"],
      key: key !== undefined ? { given: key } : { file: keyFile! },
      games: integer(values.games, "--games", 1, 2 ** 32 - 1),
      tournament: values.tournament,
      seed: integer(values.seed, "--seed", 0, 2 ** 32 - 1),
      acceptChallenges: values["accept-challenges"],
    };
  }
  if (values.games !== undefined || values.tournament !== undefined || values["accept-challenges"]) {
    throw new UsageError("--games, --tournament and --accept-challenges need --key or --key-file");
  }
  const players = integer(values.players, "--players", 2, 5) ?? 2;
  const onTimeout = values["on-timeout"];
  if (onTimeout !== undefined && onTimeout !== "forfeit" && onTimeout !== "auto") {
    throw new UsageError(`--on-timeout: expected forfeit or auto, got ${JSON.stringify(onTimeout)}`);
  }
  const mainMs = integer(values["main-ms"], "--main-ms", 0, MAX_MS);
  const incrementMs = integer(values["increment-ms"], "--increment-ms", 0, MAX_MS);
  const decisionMs = integer(values["decision-ms"], "--decision-ms", 0, MAX_MS);
  const clockGiven = [mainMs, incrementMs, decisionMs, onTimeout].some((v) => v !== undefined);
  const resignSeat = integer(values["resign-seat"], "--resign-seat", 0, players - 1);
  const resignAfter = integer(values["resign-after"], "--resign-after", 0, 2 ** 32 - 1);
  if (resignSeat === undefined && resignAfter !== undefined) {
    throw new UsageError("--resign-after needs --resign-seat");
  }
  return {
    addr: values.addr,
    players,
    river: values.river,
    count: values.count,
    seed: integer(values.seed, "--seed", 0, 2 ** 32 - 1),
    spectatorDelay: integer(values["spectator-delay"], "--spectator-delay", 0, 2 ** 32 - 1) ?? 0,
    grpcWeb: values["grpc-web"],
    clock: clockGiven
      ? {
          mainMs: mainMs ?? 0,
          incrementMs: incrementMs ?? 0,
          decisionMs: decisionMs ?? 0,
          onTimeout: onTimeout ?? "forfeit",
        }
      : undefined,
    thinkMs: integer(values["think-ms"], "--think-ms", 0, MAX_MS) ?? 0,
    marginMs: integer(values["margin-ms"], "--margin-ms", 0, MAX_MS) ?? SAFETY_MARGIN_MS,
    resign: resignSeat === undefined ? undefined : { seat: resignSeat, after: resignAfter ?? 0 },
  };
}

/** The bot's command line; the process's exit code. */
export async function main(argv: string[]): Promise<number> {
  let args: BotArgs | PlayerArgs | "help";
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
  if ("key" in args) return playRegistered(args);
  const client: GameClient = args.grpcWeb ? connectWeb(baseUrl(args.addr)) : connect(args.addr);
  const players = Array.from({ length: args.players }, (_, seat) => `Bot ${seat}`);
  try {
    const created = await client.createGame(players, {
      rules: ruleOptions({ river: args.river, count: args.count }),
      spectatorDelay: args.spectatorDelay,
      ...(args.seed === undefined ? {} : { seed: gameSeed(args.seed) }),
      ...(args.clock === undefined ? {} : { timeControl: timeControl(args.clock) }),
    });
    console.log(`created ${created.name} for ${args.players} players`);
    const play: PlayOptions = { thinkMs: args.thinkMs, marginMs: args.marginMs, onLate: reportLate };
    if (args.seed !== undefined) play.random = seededRandom(args.seed);
    if (args.resign !== undefined) play.resign = args.resign;
    const { game, steps } = await playRandomGame(client, created, play);
    console.log(formatResult(game, steps));
    return 0;
  } catch (error) {
    const text = error instanceof GameError || error instanceof Error ? error.message : String(error);
    console.error(`error: ${text}`);
    return 1;
  }
}

/** --key: plays every decision of the player until --games, the end of
 * --tournament, or Ctrl-C. */
async function playRegistered(args: PlayerArgs): Promise<number> {
  let key: string;
  try {
    key =
      "given" in args.key
        ? args.key.given
        : (readFileSync(args.key.file, "utf8").split("\n")[0] ?? "").trim();
  } catch (error) {
    console.error(`error: --key-file: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  if (key === "") {
    console.error("error: the API key is empty");
    return 1;
  }
  const client: GameClient = args.grpcWeb ? connectWeb(baseUrl(args.addr)) : connect(args.addr);
  const random = args.seed === undefined ? undefined : seededRandom(args.seed);
  const bot = new RegisteredBot(client, key, randomPolicy(random), {
    acceptChallenges: args.acceptChallenges,
    onMessage: reportMessage,
  });
  const interrupted = () => bot.stop();
  process.once("SIGINT", interrupted);
  const following = new AbortController();
  try {
    let tournament: string | undefined;
    if (args.tournament !== undefined) {
      tournament = (await client.getTournament(args.tournament)).name;
      void stopWhenOver(client, tournament, bot, following.signal);
    }
    const record = await bot.run(args.games === undefined ? {} : { games: args.games });
    console.log(formatRecord(record));
    if (tournament !== undefined) console.log(formatStandings(await client.standings(tournament)));
    return 0;
  } catch (error) {
    const text = error instanceof GameError || error instanceof Error ? error.message : String(error);
    console.error(`error: ${text}`);
    return 1;
  } finally {
    following.abort();
    process.removeListener("SIGINT", interrupted);
  }
}

/** Stops `bot` once `tournament` is over. */
async function stopWhenOver(
  client: GameClient,
  tournament: string,
  bot: RegisteredBot,
  signal: AbortSignal,
): Promise<void> {
  try {
    for await (const _ of client.watchTournament(tournament, { signal })) {
      // Each message is the whole state; the stream ends with the tournament.
    }
  } catch (error) {
    if (signal.aborted) return;
    console.error(
      `error: following ${tournament}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  bot.stop();
}

/** One line for people per round, challenge, game start and game end. */
function reportMessage(message: WatchPlayerResponse): void {
  const body = message.message;
  switch (body.case) {
    case "challenge":
      console.log(formatChallenge(body.value));
      break;
    case "roundPaired": {
      const p = body.value;
      console.log(
        p.bye
          ? `${p.tournament} round ${p.round}: a bye`
          : `${p.tournament} round ${p.round}: ${p.table.join(", ")} in ${p.games.join(", ")}`,
      );
      break;
    }
    case "gameStarted": {
      const game = body.value.game;
      if (game === undefined) break;
      console.log(
        `${game.name} started: seat ${body.value.seat} of ${game.players.map((p) => p.name).join(", ")}`,
      );
      break;
    }
    case "gameEnded": {
      const game = body.value.game;
      if (game === undefined) break;
      const mine = game.players.find((p) => p.seat === body.value.seat);
      const placed = mine === undefined ? "?" : `rank ${mine.rank}, ${mine.score} points`;
      console.log(`${game.name} ended: seat ${body.value.seat} ${placed} (${formatEnding(game)})`);
      break;
    }
    default:
      break;
  }
}

/** A challenge as it stands, for people: "challenges/c1 from players/Ada:
 * OPEN, seats players/Ada (taken), players/Bob (waiting)". */
export function formatChallenge(challenge: Challenge): string {
  const seats = challenge.seats
    .map((s) => (s.bot ? `${s.bot} bot` : `${s.player || "open"} (${s.accepted ? "taken" : "waiting"})`))
    .join(", ");
  const status = ChallengeStatus[challenge.status] ?? String(challenge.status);
  let line = `${challenge.name} from ${challenge.challenger}:${challenge.rated ? " rated" : ""} ${status}, seats ${seats}`;
  if (challenge.game) line += ` -> ${challenge.game}`;
  if (challenge.declinedBy) line += ` (declined by ${challenge.declinedBy})`;
  return line;
}

/** What a registered player's bot did, for people. */
export function formatRecord(record: BotRecord): string {
  const moved = [...record.movedOn.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([reason, n]) => `${n} ${reason}`)
    .join(", ");
  const accepted = record.accepted.length > 0 ? `, accepted ${record.accepted.length} challenges` : "";
  return `played ${record.actions} actions in ${record.ended.size} games ended${accepted}${moved ? ` (moved on: ${moved})` : ""}`;
}

/** A tournament's standings, for people. */
export function formatStandings(standings: Standings): string {
  const state = standings.final ? "final standings" : `standings after round ${standings.round}`;
  const width = Math.max(0, ...standings.standings.map((s) => s.player.length));
  const lines = [`${standings.tournament} ${state}:`];
  for (const s of standings.standings) {
    lines.push(
      `  ${String(s.rank).padStart(3)}  ${s.player.padEnd(width)}  ${s.points.padStart(6)} points  ` +
        `buchholz ${s.buchholz}  firsts ${s.firsts}  score ${s.gameScore}${s.withdrawn ? "  withdrawn" : ""}`,
    );
  }
  return lines.join("\n");
}

function reportLate(legal: LegalActions, error: GameError): void {
  console.error(
    `seat ${legal.pending.seat} answered too late at version ${legal.version}: ` +
      `${error.reason}, the server stored its timeout (deadline_ms ${error.metadata["deadline_ms"] ?? "?"})`,
  );
}
