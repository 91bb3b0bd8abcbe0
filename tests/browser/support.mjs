// What the browser tests and the first-load benchmark share: the real
// server binary on a free port with a temporary data directory (and, for
// tournaments, an admin key), gRPC clients loaded from ../../proto at run
// time (nothing generated), a bot that plays a game to its end, Debian's
// chromium through playwright-core, and Debian's firefox-esr through
// puppeteer-core (WebDriver BiDi).

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";

const here = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(here, "../..");
export const BIN = process.env.CARCASSONNE_BIN
  ? resolve(process.env.CARCASSONNE_BIN)
  : join(REPO, "target/release/carcassonne");
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const FIREFOX = process.env.FIREFOX ?? "/usr/bin/firefox-esr";

const START_TIMEOUT_MS = 30_000;

// ------------------------------------------------------------------ server

/**
 * `carcassonne serve --addr 127.0.0.1:PORT --data DIR` (port 0: any free
 * one); resolves once it prints "listening on 127.0.0.1:PORT". `adminKey`:
 * the admin key, given in CARCASSONNE_ADMIN_KEY (docs/tournaments.md).
 */
export async function startServer({ dataDir, port = 0, adminKey } = {}) {
  const data = dataDir ?? mkdtempSync(join(tmpdir(), "carcassonne-browser-"));
  const env = { ...process.env, NO_COLOR: "1" };
  delete env.CARCASSONNE_ADMIN_KEY;
  delete env.CARCASSONNE_ADMIN_KEY_FILE;
  if (adminKey) env.CARCASSONNE_ADMIN_KEY = adminKey;
  const child = spawn(BIN, ["serve", "--addr", `127.0.0.1:${port}`, "--data", data], {
    stdio: ["ignore", "pipe", "pipe"],
    env,
  });
  const log = [];
  createInterface({ input: child.stderr }).on("line", (line) => {
    log.push(line);
    if (log.length > 60) log.shift();
  });
  const exited = new Promise((done) => child.on("exit", (code, signal) => done({ code, signal })));
  const line = await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the server printed nothing in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    child.on("error", (error) => fail(new Error(`cannot start ${BIN}: ${error.message}`)));
    exited.then(({ code, signal }) => fail(new Error(`the server exited (${code ?? signal}) before listening:\n${log.join("\n")}`)));
    createInterface({ input: child.stdout }).once("line", (first) => {
      clearTimeout(timer);
      done(first);
    });
  });
  const match = /^listening on (\S+):(\d+)$/.exec(line);
  if (!match) throw new Error(`unexpected first line of the server: ${JSON.stringify(line)}`);
  const address = `${match[1]}:${match[2]}`;
  return {
    child,
    exited,
    log,
    dataDir: data,
    port: Number(match[2]),
    address,
    url: `http://${address}`,
    /** SIGTERM, then the exit; `removeData` deletes the data directory. */
    async stop({ removeData = true } = {}) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const result = await exited;
      if (removeData) rmSync(data, { recursive: true, force: true });
      return result;
    },
  };
}

// ------------------------------------------------------------------ gRPC

const definition = protoLoader.loadSync(
  [
    "carcassonne/v1/game_service.proto",
    "carcassonne/v1/watch_service.proto",
    "carcassonne/v1/player_service.proto",
    "carcassonne/v1/tournament_service.proto",
  ],
  {
    includeDirs: [join(REPO, "proto")],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  },
);
const loaded = grpc.loadPackageDefinition(definition).carcassonne.v1;

/** A unary call of `client` as a promise, with `token` as its bearer. */
const caller = (client) => (method) => (request, token) =>
  new Promise((done, fail) => {
    const metadata = new grpc.Metadata();
    if (token) metadata.set("authorization", `Bearer ${token}`);
    client[method](request, metadata, (error, answer) => (error ? fail(error) : done(answer)));
  });

/** GameService over plaintext HTTP/2, each call a promise. */
export function gameClient(address) {
  const client = new loaded.GameService(address, grpc.credentials.createInsecure());
  const call = caller(client);
  return {
    createGame: call("CreateGame"),
    getGame: call("GetGame"),
    getLegalActions: call("GetLegalActions"),
    act: call("Act"),
    close: () => client.close(),
  };
}

/**
 * PlayerService and TournamentService over plaintext HTTP/2, each call a
 * promise: registered players, organisers and tournaments
 * (docs/tournaments.md).
 */
export function leagueClient(address) {
  const players = new loaded.PlayerService(address, grpc.credentials.createInsecure());
  const tournaments = new loaded.TournamentService(address, grpc.credentials.createInsecure());
  const player = caller(players);
  const tournament = caller(tournaments);
  return {
    registerPlayer: player("RegisterPlayer"),
    setOrganiser: player("SetOrganiser"),
    createTournament: tournament("CreateTournament"),
    getTournament: tournament("GetTournament"),
    getStandings: tournament("GetStandings"),
    close: () => {
      players.close();
      tournaments.close();
    },
  };
}

/**
 * Registers `names` with the admin key (which registration always
 * accepts) and makes `organiser` an organiser; returns each one's API key
 * by name.
 */
export async function registerLeague(league, adminKey, { organiser, names }) {
  const keys = {};
  for (const name of [organiser, ...names]) {
    keys[name] = (await league.registerPlayer({ name }, adminKey)).apiKey;
  }
  await league.setOrganiser({ name: `players/${organiser}`, organiser: true }, adminKey);
  return keys;
}

/** A small seeded generator (mulberry32), so a bot's game is repeatable. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const SEED = Array.from({ length: 32 }, (_, i) => (i * 7 + 3).toString(16).padStart(2, "0").slice(-2)).join("");

/**
 * Creates a game (`timeControl`: {mainMs, incrementMs, decisionMs,
 * onTimeout}, docs/rules.md T-1; `bots`: a bot level or "" a seat, as
 * CreateGameRequest.bots); returns {id, name, tokens, game}, `tokens` by
 * seat (none for a bot's).
 */
export async function createGame(client, { players = ["Ada", "Brun"], spectatorDelay = 0, seed = SEED, rules, timeControl, bots } = {}) {
  const answer = await client.createGame({
    requestId: randomUUID(),
    players,
    seed,
    spectatorDelay,
    ...(rules ? { rules } : {}),
    ...(timeControl ? { timeControl } : {}),
    ...(bots ? { bots } : {}),
  });
  const name = answer.game.name;
  return { name, id: name.slice("games/".length), tokens: Object.fromEntries(answer.tokens.map((t) => [t.seat, t.token])), game: answer.game };
}

/**
 * Plays the game to its end with random legal actions, `pauseMs` between
 * actions (so that a page sees it live); `until(version)` may stop it
 * early. Returns the last version.
 */
export async function playGame(client, created, { pauseMs = 0, botSeed = 1, until } = {}) {
  const pick = random(botSeed);
  let legal = await client.getLegalActions({ name: created.name }, created.tokens[0]);
  let version = legal.version;
  let pending = legal.pending;
  let actions = legal.actions;
  while (pending.kind !== "DECISION_KIND_UNSPECIFIED" && actions.length > 0) {
    if (until?.(Number(version))) break;
    const action = actions[Math.floor(pick() * actions.length)];
    const answer = await client.act(
      { name: created.name, expectedVersion: version, requestId: randomUUID(), action, view: "GAME_VIEW_BASIC" },
      created.tokens[pending.seat],
    );
    version = answer.version;
    pending = answer.game.pending;
    actions = answer.legalActions;
    if (pauseMs) await new Promise((done) => setTimeout(done, pauseMs));
  }
  return Number(version);
}

/** Seat `seat` resigns (T-8) or aborts the game (T-9): `what` is "resign" or "abort". */
export async function leave(client, created, seat, what) {
  const game = (await client.getGame({ name: created.name }, created.tokens[seat])).game;
  return client.act(
    { name: created.name, expectedVersion: game.version, requestId: randomUUID(), action: { [what]: {} }, view: "GAME_VIEW_BASIC" },
    created.tokens[seat],
  );
}

/**
 * A 3-player game with the River and the Count (every kind of decision and
 * feature), played to its end: `{ game, version }`, its last version.
 */
export async function playFinishedRiverCountGame(client) {
  const game = await createGame(client, {
    players: ["Ada", "Brun", "Cleo"],
    rules: { expansions: ["EXPANSION_RIVER", "EXPANSION_COUNT"] },
  });
  return { game, version: await playGame(client, game, { botSeed: 7 }) };
}

// ------------------------------------------------------------------ browser

/**
 * Debian's chromium, headless. playwright-core's launch gives it a fresh
 * temporary user-data dir of its own (and removes it on close).
 */
export async function launchBrowser() {
  const args = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ];
  const browser = await chromium.launch({ executablePath: CHROMIUM, args, headless: true });
  return { browser, close: () => browser.close() };
}

/**
 * In the page (passed to waitForFunction, so it is self-contained): the
 * game page shows version `v`, its scores, and the loaded picture of
 * board.svg at `v`.
 */
export function showsVersion(v) {
  const game = document.querySelector("article.game");
  const image = document.querySelector(".board-image");
  return (
    game?.dataset.version === String(v) &&
    game.dataset.scoresVersion === String(v) &&
    (image?.dataset.src?.endsWith(`version=${v}`) ?? false) &&
    image.complete &&
    image.naturalWidth > 0
  );
}

/**
 * In the page (passed to evaluate, so it is self-contained), on a screen
 * `screenWidth` px wide: what does not fit. The page must not be wider than the
 * window; no element may reach past the window's sides, nor past a box
 * that clips it (`overflow` other than visible, an inline SVG's view box
 * included), except the board's picture, which is panned and zoomed in a
 * window of its own. Answers one line per fault, for the outermost element
 * at fault (not for each of its descendants).
 */
export function misfits(screenWidth) {
  const faults = [];
  // The layout's width: a phone's browser zooms out to show a page wider
  // than the screen, and its window (innerWidth) grows with it.
  const width = document.documentElement.clientWidth;
  const scrollWidth = document.documentElement.scrollWidth;
  if (width !== screenWidth) faults.push(`the page is laid out ${width} px wide on a ${screenWidth} px screen`);
  if (scrollWidth > width) faults.push(`the page is ${scrollWidth} px wide in a ${width} px window`);
  const describe = (element) => {
    const classes = element.getAttribute("class");
    const text = (element.textContent ?? "").trim().slice(0, 30);
    return `<${element.localName}${classes ? ` class="${classes}"` : ""}>${text ? ` "${text}"` : ""}`;
  };
  const shown = (element) => {
    const style = getComputedStyle(element);
    return style.display !== "none" && style.visibility !== "hidden";
  };
  const clips = (element) => {
    const style = getComputedStyle(element);
    return style.overflowX !== "visible" || style.overflowY !== "visible";
  };
  const faulty = [];
  const fault = (element, line) => {
    faulty.push(element);
    faults.push(line);
  };
  for (const element of document.body.querySelectorAll("*")) {
    if (!shown(element) || element.closest(".board-viewport, .skip-link, .visually-hidden")) continue;
    if (faulty.some((outer) => outer.contains(element))) continue;
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (box.left < -1 || box.right > width + 1) {
      fault(element, `${describe(element)} spans ${Math.round(box.left)} to ${Math.round(box.right)} px of a ${width} px window`);
      continue;
    }
    for (let parent = element.parentElement; parent && parent !== document.body; parent = parent.parentElement) {
      if (!clips(parent)) continue;
      const frame = parent.getBoundingClientRect();
      const svg = parent instanceof SVGSVGElement;
      const outside =
        box.left < frame.left - 1 || box.right > frame.right + 1 || (svg && (box.top < frame.top - 1 || box.bottom > frame.bottom + 1));
      if (outside) {
        fault(
          element,
          `${describe(element)} (${Math.round(box.left)} to ${Math.round(box.right)} px) is cut off by ${describe(parent)} (${Math.round(frame.left)} to ${Math.round(frame.right)} px)`,
        );
        break;
      }
    }
  }
  return faults;
}

/** In the page: what `showsVersion` looks at, for a failure's message. */
export function shownState() {
  const game = document.querySelector("article.game");
  const image = document.querySelector(".board-image");
  return JSON.stringify({ ...game?.dataset, src: image?.dataset.src, complete: image?.complete, width: image?.naturalWidth, banner: !document.getElementById("banner").hidden });
}

/**
 * A page that records every console error and uncaught exception, so that
 * a test can require none (or only the ones it expects).
 */
export async function watchedPage(browser, options = {}) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on("pageerror", (error) => problems.push(`exception: ${error.message}`));
  return { context, page, problems };
}

/**
 * Debian's firefox-esr, headless, over WebDriver BiDi. puppeteer-core gives
 * it a fresh temporary profile (removed on close) with its testing prefs
 * (no updates, telemetry or safe browsing). Only loopback is reachable:
 * MOZ_DISABLE_NONLOCAL_CONNECTIONS, Firefox's own test switch, refuses any
 * other connection and lets remote settings (which otherwise poll
 * firefox.settings.services.mozilla.com) use Firefox's dummy server; the
 * other prefs turn off the remaining timers that would reach out.
 */
export async function launchFirefox() {
  const browser = await puppeteer.launch({
    browser: "firefox",
    executablePath: FIREFOX,
    headless: true,
    protocol: "webDriverBiDi",
    extraPrefsFirefox: {
      "services.settings.server": "data:,#remote-settings-dummy/v1",
      "network.captive-portal-service.enabled": false,
      "network.connectivity-service.enabled": false,
      "network.dns.disablePrefetch": true,
      "network.trr.mode": 5,
      "browser.region.network.url": "",
      "browser.region.update.enabled": false,
    },
    env: { ...process.env, MOZ_DISABLE_NONLOCAL_CONNECTIONS: "1" },
  });
  return { browser, close: () => browser.close() };
}
