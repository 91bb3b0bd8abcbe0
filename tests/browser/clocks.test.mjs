// The page's clocks and early endings (docs/rules.md, T-1 to T-11) in
// Debian's chromium: a running clock counts down against the server's
// figures and no other moves, a replay's clocks stand still, a
// resignation, an abort and a timeout are told, in the game and in the
// lobby. Games are created and played over gRPC. Run by run_tests.sh.

import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createGame, gameClient, launchBrowser, leave, misfits, playGame, REPO, showsVersion, shownState, startServer, watchedPage } from "./support.mjs";

const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? join(REPO, "target/screenshots");
const DESKTOP = { viewport: { width: 1366, height: 900 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

let server;
let client;
let chrome;

before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer();
  client = gameClient(server.address);
  chrome = await launchBrowser();
});

after(async () => {
  client?.close();
  await chrome?.close();
  await server?.stop();
});

async function shownAt(page, version, timeout = 15_000) {
  await page.waitForFunction(showsVersion, version, { timeout }).catch(async (error) => {
    throw new Error(`the page did not show version ${version}: ${await page.evaluate(shownState)}`, { cause: error });
  });
}

/** A clock's reading ("04:59", "1:04:59", "2 d 03:04:59") in milliseconds. */
function readingMs(text) {
  const match = /^(?:(\d+) d )?(?:(\d+):)?(\d+):(\d\d)/.exec(text.trim());
  assert.ok(match, `not a clock reading: ${JSON.stringify(text)}`);
  const [days, hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0));
  return (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000;
}

/** What the page's clocks read now, and when (this process's clock, the server's too: same machine). */
async function readClocks(page) {
  const shown = await page.evaluate(() => ({
    seats: Object.fromEntries([...document.querySelectorAll(".players .clock")].map((clock) => [clock.dataset.seat, clock.textContent])),
    decision: document.querySelector(".decision-clock")?.textContent ?? null,
  }));
  return { ...shown, at: Date.now() };
}

function agrees(shownMs, expectedMs, what) {
  assert.ok(Math.abs(shownMs - expectedMs) <= 1000, `${what}: the page reads ${shownMs} ms, the server's figures give ${expectedMs} ms`);
}

const CLOCKED = { mainMs: 600_000, incrementMs: 5_000, decisionMs: 120_000, onTimeout: "TIMEOUT_RULE_FORFEIT" };
// The page calibrates its estimate of the server's clock for a few seconds.
const CALIBRATION_MS = 4500;

test("a clocked game counts the running seat's clocks down, live, and no other; a replay's stand still", async () => {
  const created = await createGame(client, { players: ["Ada", "Brun"], timeControl: CLOCKED });
  const version = await playGame(client, created, { botSeed: 11, until: (v) => v >= 9 });
  const game = (await client.getGame({ name: created.name })).game;
  const running = game.pending.seat;
  const other = 1 - running;
  assert.ok(Number(game.pending.deadlineMs) > 0, "a clock runs");

  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/games/${created.id}`);
  await shownAt(page, version);
  assert.equal(await page.locator(".time-control").innerText(), "10 min + 5 s a move, 2 min a decision, forfeit on time");
  assert.equal(await page.locator(".players thead th").last().innerText(), "Clock");
  await page.waitForFunction(() => document.querySelectorAll(".players .clock").length === 2 && document.querySelector(".decision-clock")?.textContent);
  await page.waitForTimeout(CALIBRATION_MS);

  const expectedMain = (at) => Number(game.players[running].timeLeftMs) - (at - Number(game.clockTimeMs));
  const expectedDecision = (at) => Number(game.pending.deadlineMs) - at;
  const first = await readClocks(page);
  await page.waitForTimeout(1300);
  const second = await readClocks(page);
  for (const reading of [first, second]) {
    agrees(readingMs(reading.seats[running]), expectedMain(reading.at), "the running seat's main time");
    agrees(readingMs(reading.decision), expectedDecision(reading.at), "the decision's time");
    agrees(readingMs(reading.seats[other]), Number(game.players[other].timeLeftMs), "the other seat's main time");
    assert.match(reading.decision, /^01:\d\d to decide$/);
  }
  assert.notEqual(first.seats[running], second.seats[running], "the running clock moved");
  assert.notEqual(first.decision, second.decision, "the decision's countdown moved");
  assert.equal(first.seats[other], second.seats[other], "the other seat's clock stood still");
  assert.ok(await page.locator(`.players tr.clock-running[data-seat="${running}"]`).isVisible());
  await page.screenshot({ path: join(SCREENSHOTS, "game-clocked-desktop.png"), fullPage: true });

  // Replay: at version 3 (the first tile drawn, its placement pending)
  // the clocks are that version's, and stand still.
  const at3 = (await fetch(`${server.url}/api/games/${created.id}?version=3`).then((r) => r.json())).game;
  await page.locator(".slider").fill("3");
  await shownAt(page, 3);
  const still = await readClocks(page);
  await page.waitForTimeout(1200);
  const later = await readClocks(page);
  assert.deepEqual(later.seats, still.seats, "a replay's clocks stand still");
  assert.equal(later.decision, still.decision);
  for (const player of at3.players) agrees(readingMs(still.seats[player.seat ?? 0]), Number(player.timeLeftMs), `seat ${player.seat ?? 0} at version 3`);
  agrees(readingMs(still.decision), Number(at3.pending.deadlineMs) - Number(at3.clockTimeMs), "the decision's time at version 3");
  assert.deepEqual(problems, [], "the page logged errors");
  await context.close();

  // A phone: the clocks fit, nothing is wider than the screen.
  const phone = await watchedPage(chrome.browser, PHONE);
  await phone.page.goto(`${server.url}/games/${created.id}`);
  await shownAt(phone.page, version);
  await phone.page.waitForFunction(() => document.querySelector(".decision-clock")?.textContent);
  assert.deepEqual(await phone.page.evaluate(misfits, PHONE.viewport.width), [], "what does not fit the phone");
  await phone.page.screenshot({ path: join(SCREENSHOTS, "game-clocked-phone.png"), fullPage: true });
  assert.deepEqual(phone.problems, [], "the page logged errors");
  await phone.context.close();
});

test("with the browser's clock an hour off, a running clock still reads the server's time", async () => {
  const created = await createGame(client, { players: ["Ada", "Brun"], timeControl: CLOCKED });
  const version = await playGame(client, created, { botSeed: 12, until: (v) => v >= 5 });
  const game = (await client.getGame({ name: created.name })).game;
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  // Date.now() and new Date() an hour ahead of the server.
  await page.addInitScript(() => {
    const skew = 3_600_000;
    const RealDate = Date;
    globalThis.Date = class extends RealDate {
      constructor(...args) {
        super(...(args.length ? args : [RealDate.now() + skew]));
      }
      static now() {
        return RealDate.now() + skew;
      }
    };
  });
  await page.goto(`${server.url}/games/${created.id}`);
  await shownAt(page, version);
  await page.waitForFunction(() => document.querySelector(".decision-clock")?.textContent);
  await page.waitForTimeout(CALIBRATION_MS);
  const reading = await readClocks(page);
  agrees(readingMs(reading.decision), Number(game.pending.deadlineMs) - reading.at, "the decision's time");
  agrees(readingMs(reading.seats[game.pending.seat]), Number(game.players[game.pending.seat].timeLeftMs) - (reading.at - Number(game.clockTimeMs)), "the running seat's main time");
  assert.deepEqual(problems, [], "the page logged errors");
  await context.close();
});

test("a resignation in a 2-player game says who resigned and who won within a second, in the game and the lobby", async () => {
  const created = await createGame(client, { players: ["Ada", "Brun"], timeControl: { mainMs: 600_000 } });
  const version = await playGame(client, created, { botSeed: 13, until: (v) => v >= 7 });
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/games/${created.id}`);
  await shownAt(page, version);
  await page.waitForTimeout(300); // the stream is open
  await leave(client, created, 0, "resign");
  const resigned = Date.now();
  await page.waitForFunction(() => /Ada resigned; Brun wins/.test(document.querySelector(".pending")?.textContent ?? ""), null, { timeout: 5000 });
  const elapsed = Date.now() - resigned;
  console.log(`the page told the resignation ${elapsed} ms after it`);
  assert.ok(elapsed < 1000, `the page told the resignation after ${elapsed} ms`);
  await page.waitForSelector(".result:not([hidden]) .ranking");
  assert.equal(await page.locator(".end-reason").innerText(), "Ada resigned; Brun wins.");
  assert.equal((await page.locator(".pending").innerText()).trim(), "The game is over: Ada resigned; Brun wins");
  const ranking = await page.locator(".ranking li").allInnerTexts();
  assert.equal(ranking.length, 2);
  assert.match(ranking[0], /^1st\s+Brun/);
  assert.match(ranking[1], /^2nd\s+Ada[\s\S]*resigned/);
  assert.equal(await page.locator('.players tr[data-seat="0"] .out-tag').innerText(), "resigned");
  assert.match(await page.locator(".moves > li").last().innerText(), /Ada resigned[^]*End of the game: Ada resigned/);
  await page.screenshot({ path: join(SCREENSHOTS, "game-resigned-desktop.png"), fullPage: true });
  assert.deepEqual(problems, [], "the page logged errors");
  await context.close();

  // The lobby: the reason on the finished game's card, the time control
  // on a running clocked game's.
  const running = await createGame(client, { players: ["Cleo", "Dora"], timeControl: CLOCKED });
  const lobby = await watchedPage(chrome.browser, DESKTOP);
  await lobby.page.goto(`${server.url}/`);
  const card = lobby.page.locator(`.game-card[data-game="${created.id}"]`);
  await card.locator(".card-ending").waitFor();
  assert.equal(await card.locator(".card-ending").innerText(), "Ada resigned.");
  const runningCard = lobby.page.locator(`.game-card[data-game="${running.id}"]`);
  assert.equal(await runningCard.locator(".card-clock").innerText(), "Clock: 10 min + 5 s a move, 2 min a decision, forfeit on time");
  await lobby.page.screenshot({ path: join(SCREENSHOTS, "lobby-clocks-desktop.png"), fullPage: true });
  await leave(client, running, 0, "resign");
  assert.deepEqual(lobby.problems, [], "the lobby logged errors");
  await lobby.context.close();
});

test("an aborted game says it has no result", async () => {
  const created = await createGame(client, { players: ["Ada", "Brun"] });
  await leave(client, created, 1, "abort");
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/games/${created.id}`);
  await page.waitForSelector(".result:not([hidden])");
  assert.equal(await page.locator(".end-reason").innerText(), "Brun aborted the game: no result.");
  assert.equal(await page.locator(".ranking").count(), 0, "no ranking");
  assert.match(await page.locator(".pending").innerText(), /no result/);
  assert.match(await page.locator(".moves").innerText(), /Brun aborted the game: no result/);
  assert.equal(await page.locator(".winner-tag").count(), 0, "no winner");
  assert.deepEqual(problems, [], "the page logged errors");
  await context.close();
});

test("seats that run out of time are shown out, and the game's end says who", async () => {
  // 1.5 s a decision, forfeit: Ada times out first, then Brun, and Cleo wins.
  const created = await createGame(client, { players: ["Ada", "Brun", "Cleo"], timeControl: { decisionMs: 1500 } });
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/games/${created.id}`);
  assert.equal(await page.locator(".time-control").innerText(), "1.5 s a decision, forfeit on time");
  await page.waitForSelector('.players tr[data-seat="0"] .out-tag', { timeout: 10_000 });
  assert.equal(await page.locator('.players tr[data-seat="0"] .out-tag').innerText(), "out of time");
  await page.waitForSelector(".result:not([hidden]) .ranking", { timeout: 10_000 });
  assert.equal(await page.locator(".end-reason").innerText(), "Brun ran out of time; Cleo wins.");
  const ranking = await page.locator(".ranking li").allInnerTexts();
  assert.match(ranking[0], /^1st\s+Cleo/);
  assert.match(ranking[1], /^2nd\s+Brun[\s\S]*out of time/);
  assert.match(ranking[2], /^3rd\s+Ada[\s\S]*out of time/);
  const moves = await page.locator(".moves").innerText();
  assert.match(moves, /Ada ran out of time and is out; tile [A-X] left the game/);
  assert.match(moves, /End of the game: Brun ran out of time/);
  assert.deepEqual(problems, [], "the page logged errors");
  await context.close();
});

test("under auto, the move list tells what the server decided for a seat out of time", async () => {
  const created = await createGame(client, { players: ["Ada", "Brun"], timeControl: { decisionMs: 1500, onTimeout: "TIMEOUT_RULE_AUTO" } });
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/games/${created.id}`);
  assert.match(await page.locator(".time-control").innerText(), /the server plays for a seat out of time/);
  const row = page.locator(".moves > li", { hasText: "Ada ran out of time" }).first();
  await row.waitFor({ timeout: 10_000 });
  assert.match(await row.innerText(), /Ada ran out of time; the server decided for Ada: placed tile [A-X] at \(-?\d+, -?\d+\)[^,]*(, turned \d+°)?, deployed no follower/);
  assert.equal(await page.locator(".out-tag").count(), 0, "nobody is out under auto");
  await leave(client, created, 1, "resign"); // no more timeouts to come
  await page.waitForSelector(".result:not([hidden])");
  assert.deepEqual(problems, [], "the page logged errors");
  await context.close();
});
