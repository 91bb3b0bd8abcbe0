// The lobby: the server's tournaments (running ones first) and every game,
// running ones first, kept live by the server's watch stream (created,
// started, finished), and running games' scores and running tournaments
// refreshed every few seconds. A card tells a clocked game's time
// control, and why a game ended early.

import { apiGamePath, gameId, gamePath, getJson, HttpError, num, openStream } from "./api.js";
import { endReasonText, sentence, timeControl, timeControlText } from "./clocks.js";
import { isTournamentFinished, tournamentCard } from "./tournament.js";
import { decisionText, el, isFinished, playerName, rulesText, seatMark, STATUS, timeText } from "./words.js";

const PAGES = 10; // at most 1000 games listed
const REFRESH_MS = 5000;
const REFRESHED_AT_ONCE = 24;
const TOURNAMENTS_SETTLE_MS = 300;

export function showLobby(main) {
  document.title = "Games · Carcassonne";
  const games = new Map(); // name -> Game
  const running = el("ul", { class: "game-cards" });
  const finished = el("ul", { class: "game-cards" });
  const runningCount = el("span", { class: "count" });
  const finishedCount = el("span", { class: "count" });
  const empty = el("p", { class: "notice", hidden: true }, "No games yet. Games created through the API appear here as soon as they exist.");
  // Shown once there is a tournament.
  const tournaments = new Map(); // name -> Tournament
  const tournamentList = el("ul", { class: "tournament-cards" });
  const tournamentCount = el("span", { class: "count" });
  const tournamentSection = el(
    "section",
    { class: "lobby-tournaments", "aria-labelledby": "tournaments-title", hidden: true },
    el("h2", { id: "tournaments-title" }, "Tournaments ", tournamentCount),
    tournamentList,
  );
  main.replaceChildren(
    el(
      "section",
      { class: "lobby", "aria-labelledby": "lobby-title" },
      el("h1", { id: "lobby-title" }, "Games"),
      el("p", { class: "lead" }, "Watch a running game live, or replay a finished one move by move."),
      empty,
      tournamentSection,
      el("h2", {}, "Running ", runningCount),
      running,
      el("h2", {}, "Finished ", finishedCount),
      finished,
    ),
  );

  // Each game's card is rebuilt only when the game changed, and a list
  // only re-laid when its games or their order did, so that a refresh
  // keeps the keyboard focus where it is.
  const keptCard = (cards, build) => (item) => {
    const text = JSON.stringify(item);
    const known = cards.get(item.name);
    if (known?.text === text) return known.element;
    const element = build(item);
    known?.element.replaceWith(element);
    cards.set(item.name, { text, element });
    return element;
  };
  const cardOf = keptCard(new Map(), card); // by name: {text, element}
  const tournamentCardOf = keptCard(new Map(), tournamentCard);
  const fill = (list, items, none) => {
    const wanted = items.length ? items : [list.querySelector(":scope > .none") ?? el("li", { class: "none" }, none)];
    const same = wanted.length === list.children.length && wanted.every((item, index) => list.children[index] === item);
    if (!same) list.replaceChildren(...wanted);
  };
  const render = () => {
    const all = [...games.values()].sort((a, b) => num(b.createTimeMs) - num(a.createTimeMs) || (a.name < b.name ? -1 : 1));
    const live = all.filter((game) => !isFinished(game));
    const done = all.filter(isFinished);
    fill(running, live.map(cardOf), "No game is running.");
    fill(finished, done.map(cardOf), "No game has finished yet.");
    runningCount.textContent = `(${live.length})`;
    finishedCount.textContent = `(${done.length})`;
    empty.hidden = all.length > 0;
    main.dataset.games = String(all.length);
  };
  const renderTournaments = () => {
    // Running first, then by name; a tournament never leaves the list.
    const all = [...tournaments.values()].sort(
      (a, b) => Number(isTournamentFinished(a)) - Number(isTournamentFinished(b)) || (a.name < b.name ? -1 : 1),
    );
    fill(tournamentList, all.map(tournamentCardOf), "No tournament yet.");
    tournamentCount.textContent = `(${all.length})`;
    tournamentSection.hidden = all.length === 0;
    main.dataset.tournaments = String(all.length);
  };

  const loadAll = async () => {
    let token = "";
    for (let page = 0; page < PAGES; page++) {
      const query = new URLSearchParams({ page_size: "100" });
      if (token) query.set("page_token", token);
      const answer = await getJson(`/api/games?${query}`);
      for (const game of answer.games ?? []) games.set(game.name, game);
      token = answer.nextPageToken ?? "";
      if (!token) break;
    }
    render();
  };

  const loadTournaments = async () => {
    let token = "";
    for (let page = 0; page < PAGES; page++) {
      const query = new URLSearchParams({ page_size: "100" });
      if (token) query.set("page_token", token);
      const answer = await getJson(`/api/tournaments?${query}`);
      for (const tournament of answer.tournaments ?? []) tournaments.set(tournament.name, tournament);
      token = answer.nextPageToken ?? "";
      if (!token) break;
    }
    renderTournaments();
  };
  // A game created or finished may be a tournament's: its round paired,
  // its result recorded. Read them again once things settle.
  let tournamentsTimer = null;
  const tournamentsSoon = () => {
    if (tournamentsTimer) return;
    tournamentsTimer = setTimeout(() => {
      tournamentsTimer = null;
      loadTournaments();
    }, TOURNAMENTS_SETTLE_MS);
  };

  const loadOne = async (name) => {
    try {
      const answer = await getJson(apiGamePath(gameId(name)));
      if (answer.game) games.set(answer.game.name, answer.game);
      render();
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
    }
  };

  // The stream first, then the list: a game created in between is in one
  // of them, or both.
  let opened = false;
  openStream((last) => `/api/server/watch${last === null ? "" : `?from_position=${encodeURIComponent(last)}`}`, {
    onOpen: () => {
      // After a reconnect the list may have changed in ways the stream's
      // resume does not cover (a restart): read it again.
      if (opened) {
        loadAll();
        loadTournaments();
      }
      opened = true;
    },
    onMessage: (message) => {
      if (message.event?.name) loadOne(message.event.name);
      if (["GAME_CHANGE_CREATED", "GAME_CHANGE_FINISHED"].includes(message.event?.change)) tournamentsSoon();
    },
  });
  loadAll();
  loadTournaments();

  setInterval(() => {
    if (document.hidden) return;
    const live = [...games.values()].filter((game) => !isFinished(game));
    live.sort((a, b) => num(b.createTimeMs) - num(a.createTimeMs));
    for (const game of live.slice(0, REFRESHED_AT_ONCE)) loadOne(game.name);
    if ([...tournaments.values()].some((tournament) => !isTournamentFinished(tournament))) loadTournaments();
  }, REFRESH_MS);
}

function card(game) {
  const id = gameId(game.name);
  const winners = new Set((game.winners ?? []).map(num));
  const players = (game.players ?? []).map((player) => {
    const seat = num(player.seat);
    const winner = isFinished(game) && winners.has(seat);
    return el(
      "li",
      { class: winner ? "winner" : undefined },
      seatMark(seat, 16),
      el("span", { class: "player-name" }, player.name ?? ""),
      winner ? el("span", { class: "winner-tag", title: "Winner" }, "winner") : null,
      el("span", { class: "player-score", "aria-label": `${num(player.score)} points` }, String(num(player.score))),
    );
  });
  const status = STATUS[game.status] ?? "Unknown";
  const early = isFinished(game) && game.ending?.reason && game.ending.reason !== "END_REASON_NORMAL";
  const control = timeControl(game);
  return el(
    "li",
    { class: "game-card", "data-game": id },
    el(
      "a",
      { href: gamePath(id), "aria-label": `Game ${id}, ${status.toLowerCase()}${early ? ` (${endReasonText(game.ending, (seat) => playerName(game, seat))})` : ""}, version ${num(game.version)}` },
      el(
        "div",
        { class: "card-board" },
        el("img", {
          src: `${gamePath(id)}/board.svg?version=${num(game.version)}`,
          alt: "",
          loading: "lazy",
          decoding: "async",
        }),
      ),
      el(
        "div",
        { class: "card-head" },
        el("span", { class: "game-id" }, id),
        el("span", { class: `status status-${status.toLowerCase()}` }, status),
      ),
      el("ul", { class: "card-players" }, players),
      isFinished(game) ? null : el("p", { class: "card-pending" }, decisionText(game.pending, (seat) => playerName(game, seat))),
      early ? el("p", { class: "card-ending" }, `${sentence(endReasonText(game.ending, (seat) => playerName(game, seat)))}.`) : null,
      control && !isFinished(game) ? el("p", { class: "card-clock" }, `Clock: ${timeControlText(control)}`) : null,
      el(
        "div",
        { class: "card-meta" },
        el("span", { class: "version" }, `version ${num(game.version)}`),
        el("span", {}, rulesText(game.rules)),
        el("time", { datetime: new Date(num(game.createTimeMs)).toISOString() }, timeText(game.createTimeMs)),
      ),
    ),
  );
}
