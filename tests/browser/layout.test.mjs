// The game page and the lobby fit the screen, in Debian's chromium: a
// clocked River and Count game with bot seats (the widest players table:
// bot tags, "In city" and "Clock" columns, the chart's legend of every
// seat) at two desktop widths and on a phone, the game page at every width
// between too. Nothing may make the page scroll sideways, stick out of the
// screen, or be cut off by a box it sits in. Games are created and played
// over gRPC. Run by run_tests.sh.

import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { createGame, gameClient, launchBrowser, misfits, REPO, showsVersion, shownState, startServer, watchedPage } from "./support.mjs";

const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? join(REPO, "target/screenshots");
const SCREENS = [
  ["1024", { viewport: { width: 1024, height: 768 } }],
  ["1366", { viewport: { width: 1366, height: 768 } }],
  ["phone", { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }],
];
// The widths where the layout changes (560 and 960 px), around them, and up to 1600.
const SWEEP = [390, 420, 480, 559, 561, 640, 768, 959, 961, 1000, 1100, 1200, 1280, 1440, 1600];
const CLOCKED = { mainMs: 3_600_000, incrementMs: 5_000, decisionMs: 600_000, onTimeout: "TIMEOUT_RULE_FORFEIT" };

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

/** Seat 0 (the only client's seat) acts `turns` times; the bots answer between. */
async function playSeatZero(created, turns) {
  for (let done = 0; done < turns; ) {
    const legal = await client.getLegalActions({ name: created.name }, created.tokens[0]);
    if (legal.pending.kind === "DECISION_KIND_UNSPECIFIED") return Number(legal.version);
    if (legal.pending.seat !== 0 || legal.actions.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    const action = legal.actions.at(-1);
    await client.act({ name: created.name, expectedVersion: legal.version, requestId: randomUUID(), action, view: "GAME_VIEW_BASIC" }, created.tokens[0]);
    done++;
  }
  // The bots have answered once seat 0 owes a decision again.
  for (;;) {
    const game = (await client.getGame({ name: created.name }, created.tokens[0])).game;
    if (game.pending.seat === 0 && game.pending.kind !== "DECISION_KIND_DRAW") return Number(game.version);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test("a clocked River and Count game with bot seats fits the screen at 1024 and 1366 px and on a phone", async () => {
  const created = await createGame(client, {
    players: ["Adelheid von Hohenzollern-Sigmaringen", "Bertrand", "Cleo", "Dora", "Emil"],
    bots: ["", "greedy", "search:200", "random", "greedy"],
    rules: { expansions: ["EXPANSION_RIVER", "EXPANSION_COUNT"] },
    timeControl: CLOCKED,
  });
  const version = await playSeatZero(created, 24);
  for (const [name, options] of SCREENS) {
    const { context, page, problems } = await watchedPage(chrome.browser, options);
    await page.goto(`${server.url}/games/${created.id}`);
    await page.waitForFunction(showsVersion, version, { timeout: 15_000 }).catch(async (error) => {
      throw new Error(`${name}: the page did not show version ${version}: ${await page.evaluate(shownState)}`, { cause: error });
    });
    await page.waitForFunction(() => document.querySelectorAll(".players .clock").length === 5 && document.querySelector(".decision-clock")?.textContent);
    // The chart is drawn: a line (and its casing) a seat.
    await page.waitForFunction(() => document.querySelectorAll(".chart path").length === 10);
    await page.screenshot({ path: join(SCREENSHOTS, `game-bots-clocked-${name}.png`), fullPage: true });
    assert.deepEqual(await page.evaluate(misfits, options.viewport.width), [], `${name}: what does not fit`);
    assert.deepEqual(
      await page.locator(".players thead th").allInnerTexts(),
      ["Player", "Score", "Followers", "In city", "Clock"],
      `${name}: the players table's columns`,
    );
    // The legend names every seat in full, with its score.
    const legend = await page.locator(".chart-legend li").allInnerTexts();
    assert.deepEqual(legend.map((item) => item.replace(/\s+\d+$/, "")).sort(), ["Adelheid von Hohenzollern-Sigmaringen", "Bertrand", "Cleo", "Dora", "Emil"]);
    for (const selector of [".players .clock", ".players td:nth-of-type(3)", ".chart-legend li"]) {
      for (const element of await page.locator(selector).all()) assert.ok(await element.isVisible(), `${name}: ${selector} is visible`);
    }
    assert.equal(await page.locator("#delay-note").innerText(), "Spectators see this game live.", `${name}: the footer on a game without a spectator delay`);
    if (name === "1024") {
      // Every width between a phone's and a wide desktop's, the same page resized.
      for (const width of SWEEP) {
        await page.setViewportSize({ width, height: 768 });
        await page.waitForFunction((w) => document.documentElement.clientWidth === w, width);
        assert.deepEqual(await page.evaluate(misfits, width), [], `${width} px: what does not fit`);
      }
    }
    assert.deepEqual(problems, [], `${name}: the page logged errors`);
    await context.close();
  }
});

test("the lobby, listing a clocked game with bot seats, fits the screen at 1024 and 1366 px and on a phone", async () => {
  const created = await createGame(client, {
    players: ["Adelheid von Hohenzollern-Sigmaringen", "Bertrand", "Cleo"],
    bots: ["", "greedy", "search:200"],
    rules: { expansions: ["EXPANSION_RIVER", "EXPANSION_COUNT"] },
    timeControl: CLOCKED,
  });
  for (const [name, options] of SCREENS) {
    const { context, page, problems } = await watchedPage(chrome.browser, options);
    await page.goto(`${server.url}/`);
    await page.locator(`.game-card[data-game="${created.id}"] .card-board img`).waitFor();
    await page.waitForFunction(() => [...document.querySelectorAll(".card-board img")].every((image) => image.complete));
    await page.screenshot({ path: join(SCREENSHOTS, `lobby-bots-clocked-${name}.png`), fullPage: true });
    assert.deepEqual(await page.evaluate(misfits, options.viewport.width), [], `${name}: what does not fit`);
    assert.deepEqual(problems, [], `${name}: the lobby logged errors`);
    await context.close();
  }
});
