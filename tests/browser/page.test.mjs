// The web page of `carcassonne serve` in a real browser: Debian's chromium,
// headless, driven by playwright-core; games created and played through the
// gRPC API by a bot. Run by run_tests.sh (node --test).
//
// Environment: CARCASSONNE_BIN (the server binary), CHROMIUM (the browser),
// SCREENSHOT_DIR (where the screenshots go; target/screenshots).

import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createGame, gameClient, launchBrowser, misfits, playFinishedRiverCountGame, playGame, REPO, showsVersion, shownState, startServer, watchedPage } from "./support.mjs";

const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? join(REPO, "target/screenshots");
const DESKTOP = { viewport: { width: 1366, height: 900 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

let server;
let client;
let chrome;
let finished; // a game played to its end, shared by the replay tests
let finishedVersion;

before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer();
  client = gameClient(server.address);
  chrome = await launchBrowser();
  ({ game: finished, version: finishedVersion } = await playFinishedRiverCountGame(client));
});

after(async () => {
  client?.close();
  await chrome?.close();
  await server?.stop();
});

function noProblems(problems) {
  assert.deepEqual(problems, [], "the page logged errors");
}

async function screenshot(page, name) {
  const path = join(SCREENSHOTS, name);
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
}

/** The version and scores the game page shows, once it shows `version`. */
async function shownAt(page, version, timeout = 15_000) {
  await page.waitForFunction(showsVersion, version, { timeout }).catch(async (error) => {
    throw new Error(`the page did not show version ${version}: ${await page.evaluate(shownState)}`, { cause: error });
  });
  return page.evaluate(() => ({
    version: Number(document.querySelector("article.game").dataset.version),
    scores: document.querySelector("article.game").dataset.scores.split(",").map(Number),
  }));
}

test("the lobby lists a game within a second of its creation, and of its end", async () => {
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/`);
  await page.waitForSelector(`main[data-games] .game-card[data-game="${finished.id}"]`);
  // The stream is open once the lobby has listed what exists.
  await page.waitForTimeout(300);
  // From CreateGame's answer: the game exists once it is stored durably.
  const asked = Date.now();
  const created = await createGame(client, { players: ["Dora", "Emil"] });
  const start = Date.now();
  await page.waitForSelector(`.game-card[data-game="${created.id}"]`, { timeout: 5000 });
  const elapsed = Date.now() - start;
  console.log(`the lobby listed the game ${elapsed} ms after its creation (CreateGame took ${start - asked} ms)`);
  assert.ok(elapsed < 1000, `the lobby showed the game after ${elapsed} ms`);
  const text = await page.locator(`.game-card[data-game="${created.id}"]`).innerText();
  assert.match(text, /Dora/);
  assert.match(text, /Running/);
  // The finished game shows its final scores.
  const final = await client.getGame({ name: finished.name });
  const card = await page.locator(`.game-card[data-game="${finished.id}"]`).innerText();
  for (const player of final.game.players) assert.ok(card.includes(String(player.score)), `card shows ${player.score}`);
  await screenshot(page, "lobby-desktop.png");
  // It moves to the finished games, with its final scores, once it ends.
  await playGame(client, created, { botSeed: 2 });
  const ended = Date.now();
  const finishedCard = page.locator(`.game-card[data-game="${created.id}"]:has(.status-finished)`);
  await finishedCard.waitFor({ timeout: 5000 });
  console.log(`the lobby showed the game finished ${Date.now() - ended} ms after its last action`);
  assert.ok(Date.now() - ended < 1000, "the lobby showed the end within a second");
  const scores = (await client.getGame({ name: created.name })).game.players.map((p) => String(p.score));
  const shownScores = await finishedCard.locator(".player-score").allInnerTexts();
  assert.deepEqual(shownScores, scores);
  noProblems(problems);
  await context.close();
});

test("a game page follows a bot's game live to the end", async () => {
  const created = await createGame(client, { players: ["Ada", "Brun"], spectatorDelay: 3 });
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/games/${created.id}`);
  await shownAt(page, 1);
  assert.equal(await page.locator("#delay-note").innerText(), "Spectators see this game 3 events behind; its players see it live.");
  // Versions seen by the page while the bot plays.
  const seen = new Set();
  const sample = setInterval(async () => {
    try {
      seen.add(await page.evaluate(() => document.querySelector("article.game")?.dataset.version));
    } catch {
      // the page is closing
    }
  }, 100);
  const playing = playGame(client, created, { pauseMs: 25, botSeed: 3 });
  // A picture of the game while it runs, for the closing note.
  await page.waitForFunction(() => Number(document.querySelector("article.game")?.dataset.version) >= 60, null, { timeout: 20_000 });
  await screenshot(page, "game-live-desktop.png");
  const last = await playing;
  clearInterval(sample);
  const server_ = await client.getGame({ name: created.name });
  assert.equal(server_.game.status, "GAME_STATUS_FINISHED");
  assert.equal(Number(server_.game.version), last);
  const shown = await shownAt(page, last, 20_000);
  assert.equal(shown.version, last);
  assert.deepEqual(shown.scores, server_.game.players.map((p) => p.score));
  assert.ok(seen.size > 5, `the page moved through only ${seen.size} versions while the game ran`);
  // The status, the final table and the audit appear at the end.
  await page.waitForSelector(".status-finished");
  await page.waitForSelector(".final-table");
  const totals = await page.locator(".final-table .total").allInnerTexts();
  assert.deepEqual(totals.map(Number), server_.game.players.map((p) => p.score), "points by feature add up to the scores");
  await page.waitForSelector('.verdict[data-ok="true"]');
  assert.equal(await page.locator("#delay-note").innerText(), "The game is over: spectators see all of it.");
  noProblems(problems);
  await context.close();
});

test("the points by feature of a River and Count game add up to its scores", async () => {
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/games/${finished.id}`);
  await shownAt(page, finishedVersion);
  await page.waitForSelector(".final-table");
  const final = (await client.getGame({ name: finished.name })).game;
  const totals = await page.locator(".final-table .total").allInnerTexts();
  assert.deepEqual(totals.map(Number), final.players.map((p) => p.score));
  const headers = await page.locator(".final-table thead th").allInnerTexts();
  assert.deepEqual(headers.slice(0, 5), ["Player", "Roads", "Cities", "Cloisters", "Fields"]);
  assert.equal(headers.at(-1), "Total");
  // Farmers' points (B-F3 and C-11 name the city they feed) count for fields.
  const farmers = await fetch(`${server.url}/api/games/${finished.id}/watch?from_version=1`).then((r) => r.text());
  const fieldPoints = final.players.map(() => 0);
  for (const line of farmers.split("\n")) {
    if (!line.startsWith("data:")) continue;
    for (const change of JSON.parse(line.slice(5)).event?.event?.scoreChanges ?? []) {
      if (["B-F3", "B-F4", "C-11", "CD-9"].includes(change.rule) || change.feature === "FEATURE_KIND_FIELD") {
        for (const seat of change.seats ?? []) fieldPoints[seat] += change.points ?? 0;
      }
    }
  }
  const fieldColumn = await page.locator(".final-table tbody tr td:nth-of-type(4)").allInnerTexts();
  assert.deepEqual(fieldColumn.map(Number), fieldPoints);
  const rows = await page.locator(".moves > li").count();
  assert.ok(rows > 50, `${rows} moves listed`);
  noProblems(problems);
  await context.close();
});

test("the replay slider at version N shows the picture of board.svg?version=N", async () => {
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/games/${finished.id}`);
  await shownAt(page, finishedVersion);
  const n = Math.floor(finishedVersion / 2);
  await page.locator(".slider").fill(String(n));
  await shownAt(page, n);
  const url = `${server.url}/games/${finished.id}/board.svg?version=${n}`;
  const svg = await (await fetch(url)).text();
  assert.match(svg, /<svg/);
  // Rasterise the picture the page shows and the one fetched here alike,
  // and compare their pixels.
  const same = await page.evaluate(async (text) => {
    const shown = document.querySelector(".board-image");
    const fetched = new Image();
    fetched.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
    await fetched.decode();
    const pixels = (image) => {
      const canvas = document.createElement("canvas");
      canvas.width = image.naturalWidth;
      canvas.height = image.naturalHeight;
      const context = canvas.getContext("2d");
      context.drawImage(image, 0, 0);
      return context.getImageData(0, 0, canvas.width, canvas.height).data;
    };
    const a = pixels(shown);
    const b = pixels(fetched);
    if (a.length !== b.length) return `sizes differ: ${shown.naturalWidth}x${shown.naturalHeight} vs ${fetched.naturalWidth}x${fetched.naturalHeight}`;
    let differing = 0;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) differing++;
    return differing === 0 ? "same" : `${differing} channel values differ`;
  }, svg);
  assert.equal(same, "same");
  assert.match(await page.locator(".last-event").innerText(), new RegExp(`^${n}: `), "the event of version N is told under the board");
  // The coordinates are the picture's own, with `coordinates=true`.
  await page.getByRole("button", { name: "Coordinates" }).click();
  await page.waitForFunction((v) => document.querySelector(".board-image")?.dataset.src?.endsWith(`version=${v}&coordinates=true`), n);
  await page.getByRole("button", { name: "Coordinates" }).click();
  await shownAt(page, n);
  // Steps and keys.
  await page.locator("body").press("ArrowRight");
  await shownAt(page, n + 1);
  await page.locator("body").press("ArrowLeft");
  await shownAt(page, n);
  await page.locator("body").press("Home");
  await shownAt(page, 1);
  await page.locator("body").press("End");
  await shownAt(page, finishedVersion);
  await page.getByRole("button", { name: "Previous version (←)" }).click();
  await shownAt(page, finishedVersion - 1);
  // Play at 4x moves forward by itself.
  await page.locator("body").press("Home");
  await page.getByLabel("Playback speed").selectOption("4");
  await page.getByRole("button", { name: "Play" }).click();
  await page.waitForFunction(() => Number(document.querySelector("article.game").dataset.version) >= 4, null, { timeout: 5000 });
  await page.getByRole("button", { name: "Pause" }).click();
  noProblems(problems);
  await context.close();
});

test("the shareable link opens the game at that version", async () => {
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  const n = 17;
  await page.goto(`${server.url}/games/${finished.id}`);
  await shownAt(page, finishedVersion);
  await page.locator(".slider").fill(String(n));
  await shownAt(page, n);
  const href = await page.locator(".share-link").getAttribute("href");
  assert.equal(href, `/games/${finished.id}?v=${n}`);
  assert.equal(new URL(page.url()).search, `?v=${n}`, "the address bar holds the version");

  const opened = await watchedPage(chrome.browser, DESKTOP);
  await opened.page.goto(`${server.url}${href}`);
  const shown = await shownAt(opened.page, n);
  assert.equal(shown.version, n);
  assert.equal(await opened.page.locator(".slider").inputValue(), String(n));
  const atN = await fetch(`${server.url}/api/games/${finished.id}?version=${n}`).then((r) => r.json());
  assert.deepEqual(shown.scores, atN.game.players.map((p) => p.score ?? 0));
  // It stays there once the whole game has been read.
  await opened.page.waitForSelector(".final-table");
  assert.equal((await shownAt(opened.page, n)).version, n);
  noProblems(problems);
  noProblems(opened.problems);
  await opened.context.close();
  await context.close();
});

test("the board pans and zooms (wheel, drag, buttons, pinch)", async () => {
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/games/${finished.id}`);
  await shownAt(page, finishedVersion);
  const transform = () => page.locator(".board-image").evaluate((image) => image.style.transform);
  const fitted = await transform();
  const box = await page.locator(".board-viewport").boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -400);
  await page.waitForFunction((before) => document.querySelector(".board-image").style.transform !== before, fitted);
  const zoomed = await transform();
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 80, box.y + box.height / 2 + 40, { steps: 4 });
  await page.mouse.up();
  assert.notEqual(await transform(), zoomed, "a drag moves the board");
  await page.getByRole("button", { name: "Fit the board to the view" }).click();
  assert.equal(await transform(), fitted);
  // A pinch: two touches moving apart zoom in.
  const scale = () => page.locator(".board-image").evaluate((image) => Number(/scale\(([^)]+)\)/.exec(image.style.transform)[1]));
  const before = await scale();
  await page.locator(".board-viewport").evaluate((viewport) => {
    const box = viewport.getBoundingClientRect();
    const y = box.top + box.height / 2;
    const touch = (type, pointerId, x) =>
      viewport.dispatchEvent(new PointerEvent(type, { pointerId, pointerType: "touch", clientX: x, clientY: y, bubbles: true, isPrimary: pointerId === 1 }));
    const middle = box.left + box.width / 2;
    touch("pointerdown", 1, middle - 40);
    touch("pointerdown", 2, middle + 40);
    for (let step = 1; step <= 5; step++) touch("pointermove", 2, middle + 40 + step * 20);
    touch("pointerup", 2, middle + 140);
    touch("pointerup", 1, middle - 40);
  });
  assert.ok((await scale()) > before * 1.5, `a pinch zoomed from ${before} to ${await scale()}`);
  noProblems(problems);
  await context.close();
});

test("a finished game on a desktop and on a phone", async () => {
  for (const [name, options] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ]) {
    const { context, page, problems } = await watchedPage(chrome.browser, options);
    await page.goto(`${server.url}/games/${finished.id}`);
    await shownAt(page, finishedVersion);
    await page.waitForSelector(".final-table");
    await page.waitForSelector('.verdict[data-ok="true"]');
    assert.deepEqual(await page.evaluate(misfits, options.viewport.width), [], `${name}: what does not fit`);
    for (const selector of [".board-viewport", ".slider", ".players", ".moves"]) {
      assert.ok(await page.locator(selector).isVisible(), `${name}: ${selector} is visible`);
    }
    const table = await page.locator(".final-table").evaluate((t) => t.parentElement.scrollWidth - t.parentElement.clientWidth);
    assert.ok(table <= 0, `${name}: the points table is ${table} px too wide`);
    const board = await page.locator(".board-viewport").boundingBox();
    assert.ok(board.width >= (options.viewport.width - 40) * (name === "phone" ? 0.9 : 0.5), `${name}: the board is ${board.width} px wide`);
    // The seed and the record's download.
    const seed = (await client.getGame({ name: finished.name })).game.seed;
    assert.equal(await page.locator(".seed").innerText(), seed);
    if (name === "desktop") {
      const download = page.waitForEvent("download");
      await page.getByRole("button", { name: "Download the record (JSON)" }).click();
      const file = await download;
      assert.equal(file.suggestedFilename(), `carcassonne-${finished.id}.json`);
      const stream = await file.createReadStream();
      let text = "";
      for await (const chunk of stream) text += chunk;
      assert.match(text, /carcassonne-record\/1/);
    }
    await screenshot(page, `game-finished-${name}.png`);
    noProblems(problems);
    await context.close();
  }
});

test("an unknown game shows a clear message", async () => {
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/games/no-such-game`);
  await page.waitForSelector('.problem[data-problem="not-found"]');
  assert.match(await page.locator("h1").innerText(), /Game not found/);
  assert.match(await page.locator(".problem").innerText(), /no-such-game/);
  // The browser logs the 404 it was answered, and nothing else.
  assert.ok(problems.every((problem) => /status of 404/.test(problem)), problems.join("\n"));
  await context.close();
});

// Last: it stops the server and starts it again on the same port.
test("the page says so when the server is down, and resumes a live game after", async () => {
  const running = await createGame(client, { players: ["Ada", "Brun"] });
  // A clocked game stores its resumption when the server starts again (T-10).
  const clocked = await createGame(client, { players: ["Ada", "Brun"], timeControl: { mainMs: 3_600_000 } });
  const before = await playGame(client, running, { botSeed: 5, until: (version) => version >= 40 });
  const lobby = await watchedPage(chrome.browser, DESKTOP);
  await lobby.page.goto(`${server.url}/`);
  await lobby.page.waitForSelector(`.game-card[data-game="${running.id}"]`);
  const game = await watchedPage(chrome.browser, PHONE);
  await game.page.goto(`${server.url}/games/${running.id}`);
  await shownAt(game.page, before);

  const { port, dataDir } = server;
  await server.stop({ removeData: false });
  await lobby.page.waitForSelector("#banner:not([hidden])", { timeout: 10_000 });
  assert.match(await lobby.page.locator("#banner").innerText(), /server cannot be reached/i);
  await game.page.waitForSelector("#banner:not([hidden])", { timeout: 10_000 });
  await screenshot(game.page, "server-down-phone.png");

  server = await startServer({ dataDir, port });
  await lobby.page.waitForSelector("#banner[hidden]", { state: "attached", timeout: 15_000 });
  await game.page.waitForSelector("#banner[hidden]", { state: "attached", timeout: 15_000 });
  // The game goes on; the page resumes its stream where it stopped.
  const last = await playGame(client, running, { botSeed: 6 });
  const final = (await client.getGame({ name: running.name })).game;
  const shown = await shownAt(game.page, last, 20_000);
  assert.deepEqual(shown.scores, final.players.map((p) => p.score));
  const versions = await game.page.locator(".moves > li").evaluateAll((rows) => rows.map((row) => Number(row.dataset.version)));
  assert.deepEqual(versions, [...new Set(versions)].sort((a, b) => a - b), "each move once, in order");
  const fresh = await watchedPage(chrome.browser, DESKTOP);
  await fresh.page.goto(`${server.url}/games/${running.id}`);
  await fresh.page.waitForSelector(".final-table");
  const expected = await fresh.page.locator(".moves > li").evaluateAll((rows) => rows.map((row) => Number(row.dataset.version)));
  assert.deepEqual(versions, expected, "the resumed list is the whole game's");
  noProblems(fresh.problems);
  await fresh.page.goto(`${server.url}/games/${clocked.id}`);
  await fresh.page.locator(".moves > li", { hasText: "clocks resumed" }).waitFor();
  assert.match(await fresh.page.locator(".moves").innerText(), /The server was down \(last alive at [^)]+\); clocks resumed/);
  noProblems(fresh.problems);
  // Only the failed connections were logged while it was down.
  for (const problems of [lobby.problems, game.problems]) {
    const other = problems.filter((problem) => !/ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|ERR_INCOMPLETE_CHUNKED_ENCODING|Failed to fetch/.test(problem));
    assert.deepEqual(other, []);
  }
  await fresh.context.close();
  await lobby.context.close();
  await game.context.close();
});
