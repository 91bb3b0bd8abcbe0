// First load of a finished game's page on loopback: a benchmark, not a test.
//
// Starts the real server, plays a game to its end through gRPC, then loads
// its page RUNS times, each in a fresh browser context (an empty cache),
// until the page is complete: the board picture of the last version shown,
// the players at that version, the whole move list read (the points by
// feature drawn) and the verification's verdict. It counts the bytes the
// browser received (every response, headers included, as chromium counts
// them) and the time from navigation to complete. The baseline is a cold
// load of `/api/health` in the same browser. Prints medians.
//
//   node first-load.mjs            (after npm ci; run_tests.sh does that)
// Environment: CARCASSONNE_BIN, CHROMIUM as for the tests; RUNS (default 9);
// DETAIL=1 prints every request of each load: start, end, bytes, address.

import { gameClient, launchBrowser, playFinishedRiverCountGame, startServer } from "./support.mjs";

const RUNS = Number(process.env.RUNS ?? 9);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Loads `url` in a fresh context; `ready(page)` resolves once complete. */
async function coldLoad(browser, url, ready) {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  const received = new Map(); // request id -> bytes so far
  const finished = new Map(); // request id -> total bytes
  cdp.on("Network.dataReceived", (event) => {
    received.set(event.requestId, (received.get(event.requestId) ?? 0) + event.encodedDataLength);
  });
  cdp.on("Network.loadingFinished", (event) => finished.set(event.requestId, event.encodedDataLength));
  const urls = new Map(); // request id -> address
  const ends = new Map(); // request id -> ms from the start
  const starts = new Map();
  cdp.on("Network.requestWillBeSent", (event) => {
    urls.set(event.requestId, event.request.url);
    starts.set(event.requestId, performance.now() - start);
  });
  cdp.on("Network.loadingFinished", (event) => ends.set(event.requestId, performance.now() - start));
  const start = performance.now();
  await page.goto(url);
  const firstMs = (await ready(page)) ?? null;
  const ms = performance.now() - start;
  // Late reports of responses already complete.
  await new Promise((done) => setTimeout(done, 200));
  if (process.env.DETAIL) {
    for (const [id, address] of urls) {
      console.log(`    ${(starts.get(id) ?? NaN).toFixed(0).padStart(5)} -> ${(ends.get(id) ?? NaN).toFixed(0).padStart(5)} ms ${String(finished.get(id) ?? received.get(id) ?? 0).padStart(7)} B ${address.replace(/^http:\/\/[^/]+/, "")}`);
    }
  }
  let bytes = 0;
  for (const [id, length] of received) bytes += finished.has(id) ? 0 : length;
  for (const length of finished.values()) bytes += length;
  const requests = new Set([...received.keys(), ...finished.keys()]).size;
  await context.close();
  return { ms, firstMs: firstMs === null ? null : firstMs - start, bytes, requests };
}

const server = await startServer();
const client = gameClient(server.address);
const chrome = await launchBrowser();
try {
  const { game, version: last } = await playFinishedRiverCountGame(client);
  const gameUrl = `${server.url}/games/${game.id}`;
  // First the board and the players at the last version, then the rest.
  const boardShown = (page) =>
    page.waitForFunction(
      (v) => {
        const article = document.querySelector("article.game");
        const image = document.querySelector(".board-image");
        return article?.dataset.scoresVersion === String(v) && image?.complete && image.naturalWidth > 0 && image.dataset.src?.endsWith(`version=${v}`);
      },
      last,
      { polling: "raf", timeout: 30_000 },
    );
  const complete = async (page) => {
    await boardShown(page);
    const first = performance.now();
    await whole(page);
    return first;
  };
  const whole = (page) =>
    page.waitForFunction(
      (v) => {
        const article = document.querySelector("article.game");
        const image = document.querySelector(".board-image");
        return (
          article?.dataset.version === String(v) &&
          article.dataset.scoresVersion === String(v) &&
          image?.complete &&
          image.naturalWidth > 0 &&
          image.dataset.src?.endsWith(`version=${v}`) &&
          document.querySelector(".final-table") &&
          document.querySelector(".verdict[data-ok]")
        );
      },
      last,
      { polling: "raf", timeout: 30_000 },
    );
  const health = (page) => page.waitForLoadState("load");

  // One warm-up of each (the server's caches, the browser's process).
  await coldLoad(chrome.browser, gameUrl, complete);
  await coldLoad(chrome.browser, `${server.url}/api/health`, health);

  const pages = [];
  const baselines = [];
  for (let run = 0; run < RUNS; run++) {
    baselines.push(await coldLoad(chrome.browser, `${server.url}/api/health`, health));
    pages.push(await coldLoad(chrome.browser, gameUrl, complete));
  }
  const pageMs = median(pages.map((r) => r.ms));
  const baseMs = median(baselines.map((r) => r.ms));
  console.log(`first load of a finished game's page (River and Count, 3 players, ${last} versions), ${RUNS} cold loads on loopback:`);
  console.log(`  board and players shown: median ${median(pages.map((r) => r.firstMs)).toFixed(1)} ms`);
  console.log(`  page:     median ${pageMs.toFixed(1)} ms (complete), ${median(pages.map((r) => r.bytes))} bytes in ${median(pages.map((r) => r.requests))} requests`);
  console.log(`  baseline: median ${baseMs.toFixed(1)} ms, ${median(baselines.map((r) => r.bytes))} bytes in ${median(baselines.map((r) => r.requests))} requests (/api/health)`);
  console.log(`  ratio:    ${(pageMs / baseMs).toFixed(1)}x the baseline's time`);
} finally {
  client.close();
  await chrome.close();
  await server.stop();
}
