// The server's HTTP API as the page uses it: JSON reads that retry while
// the server cannot be reached, server-sent event streams that reopen from
// where they stopped, and the banner that says the server is down. Every
// answer's `Date` helps estimate the server's clock (servertime.js).

import { noteDateHeader } from "./servertime.js";

/** The server answered with an error (body: {code, reason, message}). */
export class HttpError extends Error {
  constructor(status, body) {
    super(body?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? "";
    this.reason = body?.reason ?? "";
  }
}

// Every source that failed to reach the server and has not yet succeeded;
// the banner shows while there is one.
const failing = new Set();

function renderBanner() {
  const banner = document.getElementById("banner");
  if (!banner) return;
  if (failing.size === 0) {
    banner.hidden = true;
    banner.textContent = "";
    return;
  }
  banner.hidden = false;
  if (!banner.firstChild) {
    const strong = document.createElement("strong");
    strong.textContent = "The server cannot be reached.";
    banner.append(strong, " Retrying… the page will update by itself when it is back.");
  }
}

export function markDown(source) {
  failing.add(source);
  renderBanner();
}

export function markUp(source) {
  if (failing.delete(source)) renderBanner();
}

export function serverDown() {
  return failing.size > 0;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retries after 0.5 s, 1 s, 2 s ... up to every 8 s. */
export function backoff(attempt) {
  return Math.min(8000, 500 * 2 ** attempt);
}

/**
 * GET a JSON document. A network failure or a 502/503/504 (the server or
 * its storage unavailable) shows the banner and retries until it answers;
 * any other error status throws an HttpError at once.
 */
export async function getJson(url, { signal } = {}) {
  const source = `get ${url}`;
  for (let attempt = 0; ; attempt++) {
    let response;
    const sentAt = Date.now();
    try {
      response = await fetch(url, { headers: { accept: "application/json" }, signal });
      noteDateHeader(response.headers.get("date"), sentAt, Date.now());
    } catch (error) {
      if (signal?.aborted) throw error;
      markDown(source);
      await sleep(backoff(attempt));
      continue;
    }
    if ([502, 503, 504].includes(response.status)) {
      markDown(source);
      await sleep(backoff(attempt));
      continue;
    }
    markUp(source);
    if (!response.ok) {
      let body = null;
      try {
        body = await response.json();
      } catch {
        body = null;
      }
      throw new HttpError(response.status, body);
    }
    return response.json();
  }
}

/**
 * A server-sent event stream that reopens after a failure. `url(lastId)`
 * builds the address from the id of the last event received (null at
 * first), so a reopened stream resumes after it. `onMessage(data, id)`
 * gets each event's parsed JSON; `onError(status)` a status the server
 * ended the stream with (returning false stops it). Returns an object with
 * `close()` and `restartFrom(id)`.
 */
export function openStream(url, { onMessage, onOpen, onError }) {
  const source = `stream ${url(null)}`;
  let lastId = null;
  let events = null;
  let closed = false;
  let attempt = 0;
  let timer = null;

  const open = () => {
    if (closed) return;
    events = new EventSource(url(lastId));
    events.onopen = () => {
      attempt = 0;
      markUp(source);
      onOpen?.();
    };
    events.onmessage = (message) => {
      if (message.lastEventId) lastId = message.lastEventId;
      let data;
      try {
        data = JSON.parse(message.data);
      } catch {
        return; // not ours: nothing to show
      }
      onMessage(data, message.lastEventId);
    };
    // The server's own status ending the stream: the server is up, so no
    // banner; retry all the same unless the caller says stop.
    events.addEventListener("status", (event) => {
      events.close();
      if (closed) return;
      let status = {};
      try {
        status = JSON.parse(event.data);
      } catch {
        status = {};
      }
      if (status.code !== "UNAVAILABLE" && onError?.(status) === false) return;
      timer = setTimeout(open, backoff(attempt++));
    });
    events.onerror = () => {
      // The connection was lost or refused. EventSource would retry by
      // itself, but not after an HTTP error, and always from its first
      // address: reopen from the last event instead.
      events.close();
      if (closed) return;
      markDown(source);
      timer = setTimeout(open, backoff(attempt++));
    };
  };
  open();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      events?.close();
      markUp(source);
    },
    /** Reopen at once from another id (e.g. after `fell_behind`). */
    restartFrom(id) {
      lastId = String(id);
      events?.close();
      clearTimeout(timer);
      open();
    },
  };
}

/** Numbers of the canonical JSON: int64 come as strings, defaults omitted. */
export function num(value) {
  return value === undefined || value === null || value === "" ? 0 : Number(value);
}

/** The id of a game name "games/{id}". */
export function gameId(name) {
  return name.startsWith("games/") ? name.slice("games/".length) : name;
}

export function gamePath(id) {
  return `/games/${encodeURIComponent(id)}`;
}

export function apiGamePath(id) {
  return `/api/games/${encodeURIComponent(id)}`;
}

/** The id of a tournament name "tournaments/{id}". */
export function tournamentId(name) {
  return name.startsWith("tournaments/") ? name.slice("tournaments/".length) : name;
}

export function tournamentPath(id) {
  return `/tournaments/${encodeURIComponent(id)}`;
}

export function apiTournamentPath(id) {
  return `/api/tournaments/${encodeURIComponent(id)}`;
}

/** A player's name from "players/{name}". */
export function playerOf(name) {
  return (name ?? "").startsWith("players/") ? name.slice("players/".length) : (name ?? "");
}
