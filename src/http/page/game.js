// A game's page: the board picture at any version, players, the pending
// decision, the move list with its score changes, the score chart, and for
// a finished game the points by feature and the audit. Its data: the game
// (`/api/games/{id}`), its watch stream from the creation on (every event
// with score changes and scores; live after the catch-up, behind by the
// spectator delay) and the game at the version shown (`?version=N`). The
// players, their clocks and the result are players.js's.

import { apiGamePath, gamePath, getJson, HttpError, num, openStream, tournamentId, tournamentPath } from "./api.js";
import { BoardView } from "./board.js";
import { drawChart } from "./chart.js";
import { timeControl, timeControlText } from "./clocks.js";
import { PlayersView, renderResult } from "./players.js";
import { noteEventTime } from "./servertime.js";
import { moveRow, pointsByFeature, renderAudit } from "./summary.js";
import { el, eventText, icon, isFinished, rulesText, STATUS, timeText } from "./words.js";

const SPEEDS = [1, 2, 4];
const STEP_MS = 600; // one version per step at 1x
const STATES_KEPT = 64;

export async function showGame(main, id) {
  const params = new URLSearchParams(location.search);
  const asked = params.has("v") ? Math.floor(Number(params.get("v"))) : null;
  document.title = `Game ${id} · Carcassonne`;

  let info;
  try {
    info = (await getJson(apiGamePath(id))).game;
  } catch (error) {
    if (error instanceof HttpError) return showProblem(main, id, error);
    throw error;
  }
  new GamePage(main, id, info, Number.isFinite(asked) && asked >= 1 ? asked : null);
}

/** The footer's word on what spectators see of `game`: its own delay. */
function delayNote(game) {
  if (isFinished(game)) return "The game is over: spectators see all of it.";
  const delay = num(game.spectatorDelay);
  if (!delay) return "Spectators see this game live.";
  return `Spectators see this game ${delay} ${delay === 1 ? "event" : "events"} behind; its players see it live.`;
}

function showProblem(main, id, error) {
  const missing = error.status === 404;
  document.title = `${missing ? "Game not found" : "Error"} · Carcassonne`;
  main.replaceChildren(
    el(
      "section",
      { class: "problem", "data-problem": missing ? "not-found" : "error" },
      el("h1", {}, missing ? "Game not found" : "This game cannot be shown"),
      el(
        "p",
        {},
        missing
          ? `There is no game “${id}” on this server. It may have been mistyped, or it belongs to another server.`
          : `The server answered: ${error.message}`,
      ),
      el("p", {}, el("a", { href: "/" }, "See all games")),
    ),
  );
}

class GamePage {
  constructor(main, id, info, asked) {
    this.main = main;
    this.id = id;
    this.info = info; // the game as last read whole
    this.events = new Map(); // version -> WatchedEvent
    this.maxVersion = num(info.version);
    this.shown = null;
    this.following = asked === null;
    this.playing = null; // the playback timer
    this.speed = 1;
    this.states = new Map(); // version -> Game, a small cache
    // The game as first read is the state at its version: a page opened at
    // the latest version asks for nothing more before it shows.
    this.states.set(this.maxVersion, info);
    this.finished = false; // the end was handled

    // What is seen first, the board and the players, is asked for first;
    // the whole game's events and the verification once that is shown (or
    // after a moment at the latest).
    this.firstShown = new Promise((resolve) => {
      this.onFirstShown = resolve;
      setTimeout(resolve, 1000);
    });
    this.build();
    this.goTo(asked === null ? this.maxVersion : Math.min(asked, this.maxVersion), { keepFollowing: true });
    this.firstShown.then(() => this.watch());
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  name = (seat) => this.info.players?.find((player) => num(player.seat) === seat)?.name ?? `Seat ${seat + 1}`;

  // ------------------------------------------------------------ layout

  build() {
    const info = this.info;
    this.statusBadge = el("span", { class: "status" });
    this.board = new BoardView();
    this.coordinatesButton = el(
      "button",
      {
        type: "button",
        class: "icon-button",
        "aria-pressed": "false",
        title: "Show the cells' coordinates",
        "aria-label": "Coordinates",
        onclick: () => {
          const on = this.coordinatesButton.getAttribute("aria-pressed") !== "true";
          this.coordinatesButton.setAttribute("aria-pressed", String(on));
          this.showBoard();
        },
      },
      "x,y",
    );
    this.board.controls.prepend(this.coordinatesButton);
    this.lastLine = el("p", { class: "last-event" });
    this.versionLabel = el("output", { class: "version-label", "aria-live": "off" });
    this.pendingLine = el("p", { class: "pending" });

    const button = (label, icon, action, extra = {}) =>
      el("button", { type: "button", class: "icon-button", "aria-label": label, title: label, onclick: action, ...extra }, icon);
    this.playButton = button("Play", icon("play"), () => this.togglePlay(), { "aria-pressed": "false", class: "icon-button play-button" });
    this.slider = el("input", {
      type: "range",
      min: "1",
      max: String(this.maxVersion),
      step: "1",
      class: "slider",
      "aria-label": "Version",
      oninput: () => {
        this.stop();
        this.goTo(Number(this.slider.value));
      },
    });
    this.speedSelect = el(
      "select",
      { "aria-label": "Playback speed", onchange: () => this.setSpeed(Number(this.speedSelect.value)) },
      SPEEDS.map((speed) => el("option", { value: String(speed) }, `${speed}×`)),
    );
    this.liveButton = el("button", { type: "button", class: "live-button", onclick: () => this.goLive() }, "● Live");
    this.shareLink = el("a", { class: "share-link", href: "#" }, "Link to this version");
    this.copyButton = el("button", { type: "button", class: "text-button", onclick: () => this.copyLink() }, "Copy link");
    const replay = el(
      "div",
      { class: "replay", role: "group", "aria-label": "Replay" },
      el(
        "div",
        { class: "replay-buttons" },
        button("First version (Home)", icon("first"), () => this.step(-Infinity)),
        button("Previous version (←)", icon("previous"), () => this.step(-1)),
        this.playButton,
        button("Next version (→)", icon("next"), () => this.step(1)),
        button("Latest version (End)", icon("last"), () => this.step(Infinity)),
      ),
      this.slider,
      el("div", { class: "replay-extra" }, this.versionLabel, this.speedSelect, this.liveButton),
      el("div", { class: "replay-share" }, this.shareLink, this.copyButton),
    );

    this.players = new PlayersView(info, this.pendingLine);
    this.withCount = this.players.withCount;
    this.resultSection = el("section", { class: "panel result", hidden: true, "aria-labelledby": "result-title" });

    this.chart = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    this.chart.setAttribute("class", "chart");
    this.chart.setAttribute("role", "img");
    this.chart.setAttribute("aria-label", "Scores over the game's versions");
    this.chartLegend = el("ol", { class: "chart-legend", "aria-label": "Each seat's latest score, highest first" });

    this.moveList = el("ol", { class: "moves" });
    this.finalSection = el("section", { class: "panel final", hidden: true, "aria-labelledby": "final-title" });
    this.auditSection = el("section", { class: "panel audit", "aria-labelledby": "audit-title" });

    const delay = num(info.spectatorDelay);
    const control = timeControl(info);
    this.main.replaceChildren(
      el(
        "article",
        { class: "game", "data-game": this.id },
        el(
          "header",
          { class: "game-head" },
          el("h1", {}, "Game ", el("span", { class: "game-id" }, this.id)),
          this.statusBadge,
          el(
            "p",
            { class: "game-meta" },
            el("span", {}, rulesText(info.rules)),
            el("span", {}, `created ${timeText(info.createTimeMs)}`),
            control ? el("span", { class: "time-control", title: "Time control" }, timeControlText(control)) : null,
            delay ? el("span", {}, `spectators see it ${delay} ${delay === 1 ? "event" : "events"} behind`) : null,
            info.tournament ? el("a", { class: "tournament-link", href: tournamentPath(tournamentId(info.tournament)) }, "Tournament standings") : null,
          ),
        ),
        el(
          "div",
          { class: "game-grid" },
          el("section", { class: "board-panel", "aria-label": "Board" }, this.pendingLine, this.board.element, this.lastLine, replay),
          el(
            "div",
            { class: "side" },
            this.resultSection,
            el("section", { class: "panel" }, this.players.table, this.players.bagLine),
            el("section", { class: "panel" }, el("h2", {}, "Scores over time"), this.chart, this.chartLegend),
            el(
              "section",
              { class: "panel moves-panel", "aria-labelledby": "moves-title" },
              el("h2", { id: "moves-title" }, "Moves"),
              this.moveList,
            ),
          ),
          this.finalSection,
          this.auditSection,
        ),
      ),
    );
    this.renderHead();
    this.renderAudit();
  }

  renderHead() {
    const status = STATUS[this.info.status] ?? "Unknown";
    this.statusBadge.textContent = status;
    this.statusBadge.className = `status status-${status.toLowerCase()}`;
    this.liveButton.hidden = isFinished(this.info);
    const note = document.getElementById("delay-note");
    if (note) note.textContent = delayNote(this.info);
  }

  // ------------------------------------------------------------ data

  watch() {
    this.stream = openStream(
      (last) => `${apiGamePath(this.id)}/watch?from_version=${encodeURIComponent(last ?? "1")}`,
      {
        onMessage: (message) => this.onWatch(message),
        // The game vanished or cannot be watched: stop, say so once.
        onError: (status) => {
          this.pendingLine.textContent = `The live view stopped: ${status.message ?? status.code ?? "error"}`;
          return status.code !== "NOT_FOUND";
        },
      },
    );
  }

  onWatch(message) {
    if (message.event) {
      const event = message.event.event ?? {};
      const version = num(event.version);
      if (this.events.has(version)) return;
      noteEventTime(num(event.timeMs), Date.now());
      this.events.set(version, message.event);
      this.queueMove(message.event);
      this.grow(version);
      if (event.finished && !this.finished) this.finish();
    } else if (message.keepAlive !== undefined) {
      this.grow(num(message.keepAlive));
    } else if (message.fellBehind !== undefined) {
      this.stream.restartFrom(num(message.fellBehind));
    } else if (message.snapshot) {
      this.grow(num(message.snapshot.version));
      // A resume after the last event: the stream has nothing more.
      if (isFinished(message.snapshot) && !this.finished) this.finish();
    }
  }

  /** A newer version is visible: extend the slider, follow it if live. */
  grow(version) {
    if (version <= this.maxVersion && this.slider.max === String(this.maxVersion)) {
      this.scheduleChart();
      return;
    }
    this.maxVersion = Math.max(this.maxVersion, version);
    this.slider.max = String(this.maxVersion);
    // The state shown is the past now: its clocks stand still.
    this.players.passed(this.maxVersion);
    if (this.following) this.scheduleFollow();
    this.scheduleChart();
  }

  // Catching up delivers many events at once: redraw at most every 50 ms.
  scheduleFollow() {
    if (this.followTimer) return;
    this.followTimer = setTimeout(() => {
      this.followTimer = null;
      if (this.following) this.goTo(this.maxVersion, { keepFollowing: true });
    }, 50);
  }

  scheduleChart() {
    if (this.chartPending) return;
    this.chartPending = true;
    requestAnimationFrame(() => {
      this.chartPending = false;
      this.renderChart();
      this.renderPosition();
    });
  }

  async finish() {
    this.finished = true;
    this.stream.close();
    // A game that ended while watched: read it whole again (the seed, the
    // winners); one that was over when the page opened has all that.
    const ended = !isFinished(this.info);
    while (ended) {
      try {
        const game = (await getJson(apiGamePath(this.id))).game;
        if (isFinished(game)) {
          this.info = game;
          break;
        }
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
      }
      // Down, or (another server node) not there yet: read again.
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    this.renderFinal();
    if (ended) {
      this.renderHead();
      this.renderAudit();
      if (this.following) this.goTo(this.maxVersion, { keepFollowing: true });
    }
  }

  /** The game at `version`, from the cache or the server. */
  async stateAt(version) {
    const cached = this.states.get(version);
    if (cached) return cached;
    const game = (await getJson(`${apiGamePath(this.id)}?version=${version}`)).game;
    if (this.states.size >= STATES_KEPT) this.states.delete(this.states.keys().next().value);
    this.states.set(version, game);
    return game;
  }

  // ------------------------------------------------------------ position

  goTo(version, { keepFollowing = false } = {}) {
    const target = Math.max(1, Math.min(this.maxVersion, Math.round(version) || 1));
    if (!keepFollowing) this.following = target >= this.maxVersion && !isFinished(this.info);
    this.shown = target;
    this.showBoard();
    this.renderPosition();
    this.renderChart();
    this.loadState(target);
  }

  // One read of the state at a time: while one runs, the version asked
  // for last is read next. Each answer shows when it comes, so that a fast
  // live game or replay updates as it goes and ends at the version shown.
  showBoard() {
    const coordinates = this.coordinatesButton.getAttribute("aria-pressed") === "true" ? "&coordinates=true" : "";
    this.board.show(`${gamePath(this.id)}/board.svg?version=${this.shown}${coordinates}`, `The board at version ${this.shown}`);
  }

  async loadState(version) {
    if (this.stateLoading) {
      this.stateNext = version;
      return;
    }
    this.stateLoading = true;
    try {
      this.renderState(await this.stateAt(version));
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      this.pendingLine.textContent = `Version ${version} cannot be shown: ${error.message}`;
    } finally {
      this.stateLoading = false;
    }
    const next = this.stateNext;
    this.stateNext = null;
    if (next !== null && next !== undefined && next !== version) this.loadState(next);
    else if (version !== this.shown) this.loadState(this.shown);
  }

  step(delta) {
    this.stop();
    if (delta === Infinity) {
      this.goTo(this.maxVersion);
      return;
    }
    this.goTo(delta === -Infinity ? 1 : this.shown + delta);
  }

  goLive() {
    this.stop();
    this.following = true;
    this.goTo(this.maxVersion, { keepFollowing: true });
  }

  togglePlay() {
    if (this.playing) this.stop();
    else this.play();
  }

  play() {
    if (this.shown >= this.maxVersion && isFinished(this.info)) this.goTo(1);
    this.following = false;
    this.playButton.replaceChildren(icon("pause"));
    this.playButton.setAttribute("aria-label", "Pause");
    this.playButton.title = "Pause";
    this.playButton.setAttribute("aria-pressed", "true");
    const tick = () => {
      if (this.shown >= this.maxVersion) {
        this.stop();
        if (!isFinished(this.info)) this.goLive();
        return;
      }
      this.goTo(this.shown + 1, { keepFollowing: true });
      this.playing = setTimeout(tick, STEP_MS / this.speed);
    };
    this.playing = setTimeout(tick, STEP_MS / this.speed);
  }

  stop() {
    if (!this.playing) return;
    clearTimeout(this.playing);
    this.playing = null;
    this.playButton.replaceChildren(icon("play"));
    this.playButton.setAttribute("aria-label", "Play");
    this.playButton.title = "Play";
    this.playButton.setAttribute("aria-pressed", "false");
  }

  setSpeed(speed) {
    this.speed = SPEEDS.includes(speed) ? speed : 1;
    if (this.playing) {
      this.stop();
      this.play();
    }
  }

  link(version) {
    return `${location.origin}${gamePath(this.id)}?v=${version}`;
  }

  async copyLink() {
    const link = this.link(this.shown);
    try {
      await navigator.clipboard.writeText(link);
      this.copyButton.textContent = "Copied";
    } catch {
      window.prompt("The link to this version:", link);
    }
    setTimeout(() => {
      this.copyButton.textContent = "Copy link";
    }, 1500);
  }

  onKey(event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement) return;
    const actions = {
      ArrowLeft: () => this.step(-1),
      ArrowRight: () => this.step(1),
      Home: () => this.step(-Infinity),
      End: () => this.step(Infinity),
    };
    if (event.key === " " && !(target instanceof HTMLButtonElement) && !(target instanceof HTMLAnchorElement)) {
      event.preventDefault();
      this.togglePlay();
    } else if (actions[event.key]) {
      event.preventDefault();
      actions[event.key]();
    }
  }

  // ------------------------------------------------------------ rendering

  renderPosition() {
    const version = this.shown;
    this.renderLastEvent(version);
    this.slider.value = String(version);
    this.slider.setAttribute("aria-valuetext", `version ${version} of ${this.maxVersion}`);
    this.versionLabel.textContent = `Version ${version} / ${this.maxVersion}`;
    this.main.querySelector(".game").dataset.version = String(version);
    const live = this.following && !isFinished(this.info);
    this.liveButton.classList.toggle("on", live);
    this.liveButton.setAttribute("aria-pressed", String(live));
    this.shareLink.href = `${gamePath(this.id)}?v=${version}`;
    // The address holds the version, except at the end of a finished game
    // and while following a running one live.
    const plain = version === this.maxVersion && (this.following || isFinished(this.info));
    const url = plain ? gamePath(this.id) : `${gamePath(this.id)}?v=${version}`;
    if (location.pathname + location.search !== url) history.replaceState(null, "", url);
    this.highlightMove();
  }

  /** What the event of the version shown did, under the board. */
  renderLastEvent(version) {
    const watched = this.events.get(version);
    if (version === 1) {
      this.lastLine.textContent = "The game was created; no tile is placed yet.";
      return;
    }
    if (!watched) {
      this.lastLine.textContent = "";
      return;
    }
    const event = watched.event ?? {};
    const drawn = event.tileDrawn ? null : this.events.get(version - 1)?.event?.tileDrawn?.kind;
    const text = event.tileDrawn
      ? `Tile ${event.tileDrawn.kind} drawn for ${this.name(num(event.tileDrawn.seat))}`
      : eventText(event, this.name, drawn);
    const gains = new Map(); // seat -> points the event gave it
    for (const change of event.scoreChanges ?? []) {
      for (const seat of change.seats ?? []) gains.set(num(seat), (gains.get(num(seat)) ?? 0) + num(change.points));
    }
    const scored = [...gains].sort(([a], [b]) => a - b).map(([seat, points]) => `${this.name(seat)} +${points}`);
    this.lastLine.textContent = `${version}: ${text}${scored.length ? `; scores: ${scored.join(", ")}` : ""}`;
  }

  renderState(game) {
    this.onFirstShown();
    // The present counts down; an earlier version, or the present as a
    // spectator sees it behind the delay, stands still.
    const live = num(game.version) >= this.maxVersion && !num(this.info.spectatorDelay);
    this.players.show(game, { live });
    const article = this.main.querySelector(".game");
    article.dataset.scores = (game.players ?? []).map((p) => num(p.score)).join(",");
    article.dataset.scoresVersion = String(num(game.version));
  }

  // A catch-up brings hundreds of events at once: their rows are built
  // and added together once a frame, and the list laid out once.
  queueMove(watched) {
    (this.movesQueued ??= []).push(watched);
    if (this.movesQueued.length > 1) return;
    requestAnimationFrame(() => {
      const queued = this.movesQueued;
      this.movesQueued = [];
      const rows = document.createDocumentFragment();
      const late = [];
      let lastVersion = num(this.moveList.lastElementChild?.dataset.version);
      for (const item of queued) {
        const row = this.moveRow(item);
        if (!row) continue;
        const version = num(item.event?.version);
        if (version > lastVersion) {
          rows.append(row);
          lastVersion = version;
        } else {
          late.push([version, row]);
        }
      }
      this.moveList.append(rows);
      // Events arrive in order, except after a resume: keep the list sorted.
      for (const [version, row] of late) {
        const after = [...this.moveList.children].find((item) => num(item.dataset.version) > version);
        this.moveList.insertBefore(row, after ?? null);
      }
      this.highlightMove(true);
    });
  }

  /** The move list's row of an event, or null for an event not listed. */
  moveRow(watched) {
    const version = num(watched.event?.version);
    const drawn = this.events.get(version - 1)?.event?.tileDrawn?.kind;
    return moveRow(watched, this.name, drawn, () => {
      this.stop();
      this.goTo(version);
    });
  }

  highlightMove(rescroll = false) {
    if (this.shown === null) return;
    const previous = this.moveList.querySelector("li.current");
    let current = null;
    for (const item of this.moveList.children) {
      if (num(item.dataset.version) <= this.shown) current = item;
      else break;
    }
    if (previous === current && !rescroll) return;
    previous?.classList.remove("current");
    previous?.querySelector("button")?.removeAttribute("aria-current");
    if (!current) return;
    current.classList.add("current");
    current.querySelector("button")?.setAttribute("aria-current", "step");
    // Scroll the list itself, never the page.
    const list = this.moveList;
    const top = current.offsetTop; // the list is the rows' offset parent
    if (top < list.scrollTop || top + current.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = top - list.clientHeight / 3;
    }
  }

  renderChart() {
    const points = [...this.events.values()]
      .map((watched) => ({ version: num(watched.event?.version), scores: (watched.scores ?? []).map(num) }))
      .sort((a, b) => a.version - b.version);
    const names = (this.info.players ?? []).map((player) => player.name ?? "");
    drawChart(this.chart, this.chartLegend, points, names, this.shown);
  }

  renderFinal() {
    if (!isFinished(this.info)) return;
    renderResult(this.resultSection, this.info);
    this.finalSection.hidden = false;
    this.finalSection.replaceChildren(...pointsByFeature(this.info, this.events.values(), this.withCount));
  }

  renderAudit() {
    renderAudit(this.auditSection, this.id, this.info, this.firstShown);
  }
}
