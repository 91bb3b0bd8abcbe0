// Tournaments on the web page, in Debian's chromium (playwright-core),
// against the real server started with an admin key: players and an
// organiser registered over gRPC, a small Swiss created with short clocks,
// one game played by a bot and the others left to run out of time. The
// lobby lists the tournament, and its page shows the standings, live to
// the final ones, and every round's tables linked to their games.
// Run by run_tests.sh (node --test).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { gameClient, launchBrowser, leagueClient, playGame, registerLeague, REPO, startServer, watchedPage } from "./support.mjs";

const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? join(REPO, "target/screenshots");
const DESKTOP = { viewport: { width: 1366, height: 900 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
const ADMIN_KEY = `admin-${randomUUID()}`;
const PLAYERS = ["Ada", "Brun", "Cleo", "Dora"];
// A seat that does not decide within this forfeits its game: a game left
// alone ends this long after it starts.
const DECISION_MS = 4000;

let server;
let games;
let league;
let chrome;
let keys; // API key by player name

before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  server = await startServer({ adminKey: ADMIN_KEY });
  games = gameClient(server.address);
  league = leagueClient(server.address);
  chrome = await launchBrowser();
  keys = await registerLeague(league, ADMIN_KEY, { organiser: "Boss", names: PLAYERS });
});

after(async () => {
  games?.close();
  league?.close();
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

/** A Swiss of two rounds between the four players, with short clocks. */
async function createTournament(title) {
  const answer = await league.createTournament(
    {
      requestId: randomUUID(),
      title,
      participants: PLAYERS.map((name) => `players/${name}`),
      format: "TOURNAMENT_FORMAT_SWISS",
      rounds: 2,
      tableSize: 2,
      timeControl: { decisionMs: DECISION_MS, onTimeout: "TIMEOUT_RULE_FORFEIT" },
    },
    keys.Boss,
  );
  const tournament = answer.tournament;
  return { tournament, id: tournament.name.slice("tournaments/".length) };
}

/** The game of round 1, table `table`, as the bot of support.mjs plays it: each seat's token is its player's key. */
function tableGame(tournament, table) {
  const game = tournament.pairedRounds[0].tables[table].games[0];
  return { name: game.game, id: game.game.slice("games/".length), tokens: game.seats.map((seat) => keys[seat.slice("players/".length)]) };
}

/** In the page: what the tournament view shows, for comparisons and failures. */
function shownTournament() {
  const article = document.querySelector("article.tournament");
  const rows = [...document.querySelectorAll("table.standings tbody tr")].map((row) => ({
    rank: Number(row.querySelector(".rank").textContent),
    player: row.querySelector(".player-name").textContent,
    points: row.querySelector(".standing-points").textContent,
    buchholz: row.querySelector(".buchholz").textContent,
    firsts: Number(row.querySelector(".firsts").textContent),
    gameScore: Number(row.querySelector(".game-score").textContent),
    games: Number(row.querySelector(".games").textContent),
  }));
  return {
    round: Number(article?.dataset.round),
    final: article?.dataset.final === "true",
    status: article?.dataset.status,
    caption: document.querySelector("table.standings caption")?.innerText.trim().replace(/\s+/g, " "),
    rows,
  };
}

/** The standings as the server gives them, in the shape `shownTournament` reads. */
async function serverStandings(name) {
  const { standings } = await league.getStandings({ name });
  return standings.standings.map((s) => ({
    rank: s.rank,
    player: s.player.slice("players/".length),
    points: s.points,
    buchholz: s.buchholz,
    firsts: s.firsts,
    gameScore: Number(s.gameScore),
    games: s.games,
  }));
}

test("a tournament's page shows its standings live to the final ones, and its rounds' tables link to their games", async () => {
  const lobby = await watchedPage(chrome.browser, DESKTOP);
  await lobby.page.goto(`${server.url}/`);
  await lobby.page.waitForSelector("main[data-games]");

  const { tournament, id } = await createTournament("Spring open");
  assert.equal(tournament.pairedRounds[0].tables.length, 2);
  // One game of round 1 played to its end by a bot; the other runs out of
  // time, as do both of round 2.
  const played = tableGame(tournament, 0);
  const playing = playGame(games, played, { botSeed: 4 });

  // The lobby lists it as running, with a link to its page.
  const card = lobby.page.locator(`.tournament-card[data-tournament="${id}"]`);
  await lobby.page.locator(`.tournament-card[data-tournament="${id}"][data-status="running"]`).waitFor({ timeout: 5000 });
  assert.match(await card.innerText(), /Spring open/);
  assert.match(await card.innerText(), /Swiss, 2 rounds/);
  assert.equal(await card.locator("a").getAttribute("href"), `/tournaments/${id}`);
  await screenshot(lobby.page, "lobby-tournaments-desktop.png");

  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/tournaments/${id}`);
  await page.waitForSelector(`article.tournament[data-tournament="${id}"] table.standings tbody tr`);
  // What the view shows from now on, sampled, in one document: a reload
  // would lose the mark.
  await page.evaluate(() => {
    window.sameDocument = true;
  });
  const seen = [];
  const sampling = setInterval(async () => {
    try {
      seen.push(await page.evaluate(shownTournament));
    } catch {
      // the page is navigating or closing
    }
  }, 100);
  // A failure must not leave it running: the test's process could not end.
  sampling.unref();
  const first = await page.evaluate(shownTournament);
  assert.equal(first.final, false, "the tournament has only begun");
  assert.equal(first.caption, "Standings Live");
  assert.deepEqual(first.rows.map((row) => row.player).sort(), [...PLAYERS].sort());
  assert.deepEqual(first.rows.map((row) => row.rank), [1, 2, 3, 4]);
  assert.match(await page.locator(".standings-note").innerText(), /update by themselves/);
  assert.equal(await page.title(), "Spring open · Tournament · Carcassonne");

  // Round 1's tables link to their games.
  const links = await page.locator('.round[data-round="1"] a.game-link').evaluateAll((anchors) => anchors.map((a) => a.getAttribute("href")));
  const expected = tournament.pairedRounds[0].tables.map((table) => `/games/${table.games[0].game.slice("games/".length)}`);
  assert.deepEqual(links.sort(), expected.sort());
  await screenshot(page, "tournament-running-desktop.png");

  // The bot's game ends: its result and the standings show, live.
  const last = await playing;
  const ended = (await games.getGame({ name: played.name })).game;
  assert.equal(ended.status, "GAME_STATUS_FINISHED", `the bot's game ended at version ${last}`);
  const playedItem = page.locator(`.table-game[data-game="${played.id}"][data-ended="true"]`);
  await playedItem.waitFor({ timeout: 10_000 });
  for (const player of ended.players) {
    assert.ok((await playedItem.innerText()).includes(`${player.score} point`), `the result shows ${player.name}'s ${player.score} points`);
  }

  // The end: the final standings, as the server has them, still on the same page.
  await page.waitForSelector('article.tournament[data-final="true"]', { timeout: 60_000 });
  const final = await page.evaluate(shownTournament);
  const { tournament: over } = await league.getTournament({ name: tournament.name });
  assert.equal(over.status, "TOURNAMENT_STATUS_FINISHED");
  assert.deepEqual(final.rows, await serverStandings(tournament.name));
  assert.equal(final.caption, "Standings Final");
  assert.equal(final.status, "finished");
  assert.ok(await page.locator(".final-tag").isVisible(), "the final flag shows");
  assert.equal(await page.locator(".game-head .status").innerText(), "Finished");
  assert.equal(await page.locator("code.seed").innerText(), over.seed);
  assert.equal(await page.evaluate(() => window.sameDocument), true, "the page was not reloaded");
  // It was seen live: round 2 under way with round 1's points in, then the end.
  clearInterval(sampling);
  const between = seen.find((state) => state.round === 2 && !state.final);
  assert.ok(between, `round 2 was never shown while it ran: ${JSON.stringify(seen.map(({ round, final }) => ({ round, final })))}`);
  const points = (state) => state.rows.reduce((sum, row) => sum + Number(row.points), 0);
  assert.ok(points(between) > 0, `round 1's points were not in the standings during round 2: ${JSON.stringify(between)}`);
  assert.ok(points(final) > points(between), "round 2's points came in");

  // Both rounds' tables link to every game of the tournament.
  const allLinks = await page.locator("a.game-link").evaluateAll((anchors) => anchors.map((a) => a.getAttribute("href")));
  const allGames = over.pairedRounds.flatMap((round) => round.tables.flatMap((table) => table.games.map((game) => `/games/${game.game.slice("games/".length)}`)));
  assert.equal(allGames.length, 4);
  assert.deepEqual(allLinks.sort(), allGames.sort());
  await screenshot(page, "tournament-final-desktop.png");

  // A link opens the game, whose page links back to the tournament.
  await page.locator(`.table-game[data-game="${played.id}"] a.game-link`).click();
  await page.waitForSelector(`article.game[data-game="${played.id}"]`);
  assert.equal(new URL(page.url()).pathname, `/games/${played.id}`);
  assert.equal(await page.locator("a.tournament-link").getAttribute("href"), `/tournaments/${id}`);

  // The lobby's card says it is over.
  await lobby.page.locator(`.tournament-card[data-tournament="${id}"][data-status="finished"]`).waitFor({ timeout: 15_000 });
  assert.match(await card.innerText(), /finished after 2 rounds/);
  noProblems(problems);
  noProblems(lobby.problems);
  await context.close();
  await lobby.context.close();
});

test("a finished tournament on a phone", async () => {
  const { tournament, id } = await createTournament("Phone cup");
  // Every game runs out of time: two rounds.
  const { context, page, problems } = await watchedPage(chrome.browser, PHONE);
  await page.goto(`${server.url}/tournaments/${id}`);
  await page.waitForSelector('article.tournament[data-final="true"]', { timeout: 60_000 });
  assert.deepEqual((await page.evaluate(shownTournament)).rows, await serverStandings(tournament.name));
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than the screen`);
  const table = await page.locator("table.standings").evaluate((t) => t.parentElement.scrollWidth - t.parentElement.clientWidth);
  assert.ok(table <= 0, `the standings are ${table} px too wide`);
  for (const selector of ["table.standings", ".rounds-panel", "a.game-link"]) {
    assert.ok(await page.locator(selector).first().isVisible(), `${selector} is visible`);
  }
  await screenshot(page, "tournament-final-phone.png");
  noProblems(problems);
  await context.close();
});

test("an unknown tournament shows a clear message", async () => {
  const { context, page, problems } = await watchedPage(chrome.browser, DESKTOP);
  await page.goto(`${server.url}/tournaments/nosuchtournament`);
  await page.waitForSelector('.problem[data-problem="not-found"]');
  assert.match(await page.locator("h1").innerText(), /Tournament not found/);
  assert.match(await page.locator(".problem").innerText(), /nosuchtournament/);
  // The browser logs the 404s it was answered, and nothing else.
  assert.ok(problems.every((problem) => /status of 404/.test(problem)), problems.join("\n"));
  await context.close();
});
