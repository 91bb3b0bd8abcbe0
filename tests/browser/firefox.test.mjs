// The web page's essential checks in Firefox: Debian's firefox-esr,
// headless with a fresh temporary profile, driven by puppeteer-core over
// WebDriver BiDi (playwright-core cannot drive a stock Firefox); the same
// server, bot and checks of the shown version as page.test.mjs (support.mjs).
// Run by run_tests.sh (node --test). Environment: CARCASSONNE_BIN, FIREFOX.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createGame, gameClient, launchFirefox, leave, playFinishedRiverCountGame, playGame, showsVersion, shownState, startServer } from "./support.mjs";

let server;
let client;
let firefox;
let finished; // a game played to its end
let finishedVersion;

before(async () => {
  server = await startServer();
  client = gameClient(server.address);
  [firefox] = await Promise.all([
    launchFirefox(),
    playFinishedRiverCountGame(client).then((played) => {
      finished = played.game;
      finishedVersion = played.version;
    }),
  ]);
});

after(async () => {
  client?.close();
  await firefox?.close();
  await server?.stop();
});

/** A page in a context of its own that records console errors and exceptions. */
async function watchedPage() {
  const context = await firefox.browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1366, height: 900 });
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()} (${message.location()?.url ?? ""})`);
  });
  page.on("pageerror", (error) => problems.push(`exception: ${error.message ?? error}`));
  return { context, page, problems };
}

async function shownAt(page, version, timeout = 15_000) {
  await page.waitForFunction(showsVersion, { timeout }, version).catch(async (error) => {
    throw new Error(`the page did not show version ${version}: ${await page.evaluate(shownState)}`, { cause: error });
  });
  return page.evaluate(() => ({
    version: Number(document.querySelector("article.game").dataset.version),
    scores: document.querySelector("article.game").dataset.scores.split(",").map(Number),
    src: document.querySelector(".board-image").dataset.src,
    search: location.search,
  }));
}

const texts = (page, selector) => page.$$eval(selector, (nodes) => nodes.map((node) => node.textContent.trim()));

test("firefox: the lobby lists a newly created game", async () => {
  const { context, page, problems } = await watchedPage();
  await page.goto(`${server.url}/`);
  await page.waitForSelector(`main[data-games] .game-card[data-game="${finished.id}"]`);
  const created = await createGame(client, { players: ["Dora", "Emil"] });
  const card = await page.waitForSelector(`.game-card[data-game="${created.id}"]`, { timeout: 5000 });
  const text = await card.evaluate((node) => node.innerText);
  assert.match(text, /Dora/);
  assert.match(text, /Running/);
  const final = (await client.getGame({ name: finished.name })).game;
  const scores = await texts(page, `.game-card[data-game="${finished.id}"] .player-score`);
  assert.deepEqual(scores, final.players.map((p) => String(p.score)));
  assert.deepEqual(problems, [], "the page logged errors");
  await context.close();
});

test("firefox: a finished game shows its board, players, scores, moves and points table", async () => {
  const { context, page, problems } = await watchedPage();
  await page.goto(`${server.url}/games/${finished.id}`);
  const shown = await shownAt(page, finishedVersion);
  const final = (await client.getGame({ name: finished.name })).game;
  assert.equal(final.status, "GAME_STATUS_FINISHED");
  assert.equal(shown.version, Number(final.version));
  assert.deepEqual(shown.scores, final.players.map((p) => p.score));
  assert.match(shown.src, new RegExp(`/games/${finished.id}/board\\.svg\\?version=${finishedVersion}$`));
  assert.deepEqual(await texts(page, ".players .player-name"), final.players.map((p) => p.name));
  assert.deepEqual(await texts(page, ".players .score"), final.players.map((p) => String(p.score)));
  await page.waitForSelector(".final-table");
  assert.deepEqual(await texts(page, ".final-table .total"), final.players.map((p) => String(p.score)), "points by feature add up to the scores");
  const moves = await page.$$eval(".moves > li", (rows) => rows.length);
  assert.ok(moves > 50, `${moves} moves listed`);
  await page.waitForSelector('.verdict[data-ok="true"]');
  assert.deepEqual(problems, [], "the page logged errors");
  await context.close();
});

test("firefox: the replay slider and keys move to a version, and ?v=N opens it", async () => {
  const { context, page, problems } = await watchedPage();
  await page.goto(`${server.url}/games/${finished.id}`);
  await shownAt(page, finishedVersion);
  const n = Math.floor(finishedVersion / 2);
  // The slider as a user moves it: focused, then the keys of a range input.
  await page.$eval(".slider", (slider, value) => {
    slider.value = String(value + 3);
    slider.dispatchEvent(new Event("input", { bubbles: true }));
  }, n);
  await shownAt(page, n + 3);
  await page.focus(".slider");
  for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowLeft");
  let shown = await shownAt(page, n);
  assert.equal(shown.search, `?v=${n}`, "the address holds the version");
  assert.match(shown.src, new RegExp(`board\\.svg\\?version=${n}$`));
  // The page's own keys, away from the slider.
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press("ArrowRight");
  shown = await shownAt(page, n + 1);
  assert.equal(shown.search, `?v=${n + 1}`);
  await page.keyboard.press("Home");
  await shownAt(page, 1);
  await page.keyboard.press("End");
  await shownAt(page, finishedVersion);
  // The link with ?v=N opens the game at N: its version, scores and picture.
  const opened = await watchedPage();
  await opened.page.goto(`${server.url}/games/${finished.id}?v=${n}`);
  shown = await shownAt(opened.page, n);
  const atN = await fetch(`${server.url}/api/games/${finished.id}?version=${n}`).then((r) => r.json());
  assert.deepEqual(shown.scores, atN.game.players.map((p) => p.score ?? 0));
  assert.equal(await opened.page.$eval(".slider", (slider) => slider.value), String(n));
  const svg = await fetch(`${server.url}/games/${finished.id}/board.svg?version=${n}`);
  assert.equal(svg.status, 200);
  assert.match(await svg.text(), /<svg/);
  await opened.page.waitForSelector(".final-table");
  assert.equal((await shownAt(opened.page, n)).version, n, "it stays at N once the whole game is read");
  assert.deepEqual(problems, [], "the page logged errors");
  assert.deepEqual(opened.problems, [], "the page opened at ?v=N logged errors");
  await opened.context.close();
  await context.close();
});

test("firefox: an unknown game shows a clear message", async () => {
  const { context, page, problems } = await watchedPage();
  await page.goto(`${server.url}/games/no-such-game`);
  await page.waitForSelector('.problem[data-problem="not-found"]');
  assert.match(await page.$eval("h1", (h1) => h1.textContent), /Game not found/);
  assert.match(await page.$eval(".problem", (node) => node.textContent), /no-such-game/);
  assert.deepEqual(problems, [], "the page logged errors");
  await context.close();
});

test("firefox: a game that ended by resignation shows why, the ranking and the clocks", async () => {
  const created = await createGame(client, { players: ["Ada", "Brun"], timeControl: { mainMs: 300_000, incrementMs: 2_000 } });
  await playGame(client, created, { botSeed: 4, until: (v) => v >= 8 });
  await leave(client, created, 1, "resign");
  const final = (await client.getGame({ name: created.name })).game;
  const { context, page, problems } = await watchedPage();
  await page.goto(`${server.url}/games/${created.id}`);
  await shownAt(page, Number(final.version));
  await page.waitForSelector(".result:not([hidden]) .ranking");
  assert.equal(await page.$eval(".end-reason", (node) => node.textContent), "Brun resigned; Ada wins.");
  assert.match(await page.$eval(".pending", (node) => node.textContent), /The game is over: Brun resigned; Ada wins/);
  const ranking = await texts(page, ".ranking li");
  assert.match(ranking[0], /^1st\s*Ada/);
  assert.match(ranking[1], /^2nd\s*Brun.*resigned/);
  assert.equal(await page.$eval('.players tr[data-seat="1"] .out-tag', (node) => node.textContent), "resigned");
  assert.equal(await page.$eval(".time-control", (node) => node.textContent), "5 min + 2 s a move, forfeit on time");
  // The clocks stand at the server's figures of the end.
  const clocks = await texts(page, ".players .clock");
  const expected = final.players.map((player) => {
    const seconds = Math.round(Number(player.timeLeftMs) / 1000);
    return `${String(Math.floor(seconds / 60)).padStart(2, "0")}:${String(seconds % 60).padStart(2, "0")}`;
  });
  assert.deepEqual(clocks, expected);
  assert.deepEqual(problems, [], "the page logged errors");
  await context.close();
});
