// Words and marks for people: seat colours and shapes (the board picture's
// own), decisions, events, features and score changes.

import { num } from "./api.js";

// The colours and follower shapes of the seats, exactly as the board
// picture draws them (crates/picture, palette.rs: the Okabe–Ito colours,
// distinguishable with the common colour-vision deficiencies, and a shape
// per seat, so that colour never has to be told apart alone).
export const SEATS = [
  { colour: "#d55e00", shape: "circle" },
  { colour: "#0072b2", shape: "square" },
  { colour: "#f0e442", shape: "triangle" },
  { colour: "#cc79a7", shape: "diamond" },
  { colour: "#56b4e9", shape: "hexagon" },
];
const OUTLINE = "#1b1b1b";

export function seatStyle(seat) {
  return SEATS[seat % SEATS.length];
}

const SVG = "http://www.w3.org/2000/svg";

// The picture's shapes (palette.rs `follower`), in units of the radius.
const SHAPES = {
  square: [[-0.85, -0.85], [0.85, -0.85], [0.85, 0.85], [-0.85, 0.85]],
  triangle: [[0, -1.15], [1.05, 0.8], [-1.05, 0.8]],
  diamond: [[0, -1.2], [1.2, 0], [0, 1.2], [-1.2, 0]],
  hexagon: [[-0.5, -0.9], [0.5, -0.9], [1.05, 0], [0.5, 0.9], [-0.5, 0.9], [-1.05, 0]],
};

/** A seat's follower as the board picture draws it, `size` pixels wide. */
export function seatMark(seat, size = 18) {
  const style = seatStyle(seat);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "-10 -10 20 20");
  svg.setAttribute("width", size);
  svg.setAttribute("height", size);
  svg.setAttribute("class", "seat-mark");
  svg.setAttribute("aria-hidden", "true");
  const r = 7.6;
  let shape;
  if (style.shape === "circle") {
    shape = document.createElementNS(SVG, "circle");
    shape.setAttribute("r", String(r));
  } else {
    const points = SHAPES[style.shape].map(([x, y]) => `${(x * r).toFixed(2)},${(y * r + (style.shape === "triangle" ? 1 : 0)).toFixed(2)}`);
    shape = polygon(points.join(" "));
  }
  shape.setAttribute("fill", style.colour);
  shape.setAttribute("stroke", OUTLINE);
  shape.setAttribute("stroke-width", String(r * 0.22));
  shape.setAttribute("stroke-linejoin", "round");
  svg.append(shape);
  return svg;
}

function polygon(points) {
  const shape = document.createElementNS(SVG, "polygon");
  shape.setAttribute("points", points);
  return shape;
}

/** An element with text content (and optional class). */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child);
  }
  return node;
}

export const STATUS = {
  GAME_STATUS_RUNNING: "Running",
  GAME_STATUS_FINISHED: "Finished",
};

export function isFinished(game) {
  return game?.status === "GAME_STATUS_FINISHED";
}

export const FEATURES = {
  FEATURE_KIND_ROAD: { name: "road", column: "Roads", short: "Road" },
  FEATURE_KIND_CITY: { name: "city", column: "Cities", short: "City" },
  FEATURE_KIND_CLOISTER: { name: "cloister", column: "Cloisters", short: "Cloi." },
  FEATURE_KIND_FIELD: { name: "field", column: "Fields", short: "Field" },
  FEATURE_KIND_CITY_OF_CARCASSONNE: { name: "City of Carcassonne", column: "City of Carcassonne", short: "Carc." },
};

export function featureName(kind) {
  return FEATURES[kind]?.name ?? "feature";
}

const QUARTERS = {
  QUARTER_CASTLE: "castle",
  QUARTER_BLACKSMITH: "blacksmith",
  QUARTER_CATHEDRAL: "cathedral",
  QUARTER_MARKET: "market",
};

export function quarterName(quarter) {
  return QUARTERS[quarter] ?? "quarter";
}

const EXPANSIONS = { EXPANSION_RIVER: "The River", EXPANSION_COUNT: "The Count of Carcassonne" };

export function rulesText(rules) {
  const parts = [];
  for (const expansion of rules?.expansions ?? []) parts.push(EXPANSIONS[expansion] ?? expansion);
  if (rules?.smallCity === "SMALL_CITY_NORMAL") parts.push("small cities score in full");
  if (rules?.farmers === "FARMER_SCORING_FARM_CENTRIC_3") parts.push("farm-centric farmers");
  return parts.length ? parts.join(", ") : "Base game";
}

export function playerName(game, seat) {
  return game?.players?.find((p) => num(p.seat) === seat)?.name ?? `Seat ${seat + 1}`;
}

/** The pending decision in words; names() gives a seat's name. */
export function decisionText(pending, name) {
  const seat = num(pending?.seat);
  switch (pending?.kind) {
    case "DECISION_KIND_DRAW":
      return `Drawing a tile for ${name(seat)}`;
    case "DECISION_KIND_PLACE_TILE":
      return `${name(seat)} places tile ${pending.tile ?? ""}`.trim();
    case "DECISION_KIND_PLACE_FOLLOWER":
      return `${name(seat)} may deploy a follower on the tile just placed`;
    case "DECISION_KIND_REDEPLOY":
      return `${name(seat)} may move followers from Carcassonne onto the features ${name(num(pending.placer))} completed`;
    case "DECISION_KIND_DEPLOY_TO_CARCASSONNE":
      return `${name(seat)} may deploy a follower to a quarter of Carcassonne`;
    case "DECISION_KIND_FINAL_ROUND":
      return `Final round: ${name(seat)} may move a follower from Carcassonne`;
    default:
      return "The game is over";
  }
}

function placeText(place) {
  const short = (place ?? "").replace("PLACE_", "");
  if (short === "CLOISTER") return "a monk on the cloister";
  if (short.length === 2) return `a farmer on the field at ${short}`;
  return `a follower at ${short}`;
}

function targetText(target) {
  const at = `(${num(target?.position?.x)}, ${num(target?.position?.y)})`;
  const place = (target?.place ?? "").replace("PLACE_", "");
  if (place === "CLOISTER") return `the cloister at ${at}`;
  if (place.length === 2) return `the field at ${place} of ${at}`;
  return `the feature at ${place} of ${at}`;
}

/**
 * What an event did, in words, or null for events not worth a line (draws
 * are told with the placement that follows). `tileOf(version)` gives the
 * kind of the tile drawn before a placement.
 */
export function eventText(event, name, drawnKind) {
  const seat = event.seat === undefined ? null : num(event.seat);
  const who = seat === null ? "" : name(seat);
  if (event.created) return `Game created for ${(event.created.players ?? []).join(", ")}`;
  if (event.tileDrawn) return null;
  if (event.tilePlaced) {
    const x = num(event.tilePlaced.position?.x);
    const y = num(event.tilePlaced.position?.y);
    const rotation = num(event.tilePlaced.rotation);
    const kind = drawnKind ? ` ${drawnKind}` : "";
    return `${who} placed tile${kind} at (${x}, ${y})${rotation ? `, turned ${rotation}°` : ""}`;
  }
  if (event.followerPlaced) {
    const place = event.followerPlaced.place;
    if (!place || place === "PLACE_UNSPECIFIED") return `${who} deployed no follower`;
    return `${who} deployed ${placeText(place)}`;
  }
  if (event.followerMoved) return `${who} moved a follower from Carcassonne to ${targetText(event.followerMoved.target)}`;
  if (event.passed) return `${who} passed`;
  if (event.deployedToCarcassonne) {
    const deploy = event.deployedToCarcassonne;
    const count = deploy.count && deploy.count !== "QUARTER_UNSPECIFIED" ? `, the count to the ${quarterName(deploy.count)}` : "";
    return `${who} deployed a follower to the ${quarterName(deploy.quarter)}${count}`;
  }
  if (event.timedOut) return timeoutText(event, name(num(event.timedOut.seat)), drawnKind);
  if (event.resigned) return `${who} resigned${abandonedText(event)}`;
  if (event.aborted) return `${who} aborted the game: no result`;
  if (event.resumed) {
    const since = clockTimeText(event.resumed.downSinceMs);
    return `The server was down${since ? ` (last alive at ${since})` : ""}; clocks resumed`;
  }
  return who ? `${who} acted` : "Event";
}

/** "; tile K left the game" for a seat that went out holding a drawn tile. */
function abandonedText(event) {
  return event.abandoned ? `; tile ${event.abandoned} left the game` : "";
}

/** A timeout (T-5): the seat went out (forfeit), or the server decided for it (auto). */
function timeoutText(event, who, drawnKind) {
  const decided = (event.decidedForSeat ?? []).map((action) => actionText(action, drawnKind)).filter(Boolean);
  let text = `${who} ran out of time`;
  if (event.seatOut !== undefined && event.seatOut !== null) text += ` and is out${abandonedText(event)}`;
  if (decided.length) text += `; the server decided for ${who}: ${decided.join(", ")}`;
  return text;
}

/** An action the server took for a seat (T-7), in words. */
function actionText(action, drawnKind) {
  if (action.placeTile) {
    const at = `(${num(action.placeTile.position?.x)}, ${num(action.placeTile.position?.y)})`;
    const rotation = num(action.placeTile.rotation);
    return `placed tile${drawnKind ? ` ${drawnKind}` : ""} at ${at}${rotation ? `, turned ${rotation}°` : ""}`;
  }
  if (action.placeFollower) {
    const place = action.placeFollower.place;
    return !place || place === "PLACE_UNSPECIFIED" ? "deployed no follower" : `deployed ${placeText(place)}`;
  }
  if (action.pass) return "passed";
  if (action.moveFromCarcassonne) return `moved a follower from Carcassonne to ${targetText(action.moveFromCarcassonne.target)}`;
  if (action.deployToCarcassonne) return `deployed a follower to the ${quarterName(action.deployToCarcassonne.quarter)}`;
  return "";
}

// The rules that score farmers (docs/rules.md): their score change names
// the city they feed (B-F3, C-11) or their field (B-F4, CD-9), but the
// points are the fields'.
const FARMER_RULES = new Set(["B-F3", "B-F4", "C-11", "CD-9"]);

/** The feature kind a score change's points count for: farmers' are fields'. */
export function pointsKind(change) {
  return FARMER_RULES.has(change.rule) ? "FEATURE_KIND_FIELD" : (change.feature ?? "FEATURE_KIND_UNSPECIFIED");
}

/** "+4 Ada — city of 3 tiles, 1 pennant · B-S2" */
export function scoreChangeText(change, name) {
  const seats = (change.seats ?? []).map((s) => name(num(s))).join(", ");
  const tiles = num(change.tiles);
  const pennants = num(change.pennants);
  let feature = featureName(change.feature);
  const sizes = [];
  if (tiles) sizes.push(`${tiles} ${tiles === 1 ? "tile" : "tiles"}`);
  if (pennants) sizes.push(`${pennants} ${pennants === 1 ? "pennant" : "pennants"}`);
  if (sizes.length) feature += ` of ${sizes.join(", ")}`;
  if (FARMER_RULES.has(change.rule)) {
    feature = change.feature === "FEATURE_KIND_FIELD" ? `farmers of the ${feature}` : `farmers by the ${feature}`;
  }
  return { points: `+${num(change.points)}`, seats, feature, rule: change.rule ?? "" };
}

export function timeText(ms) {
  const value = num(ms);
  if (!value) return "";
  return new Date(value).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A moment as a time of day (with the date when not today). */
export function clockTimeText(ms) {
  const value = num(ms);
  if (!value) return "";
  const date = new Date(value);
  const today = date.toDateString() === new Date().toDateString();
  return today ? date.toLocaleTimeString() : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

const ICONS = {
  first: "M4 5h2.2v14H4zM13 5v14L6.5 12zM20.5 5v14L14 12z",
  previous: "M16.5 5h2.2v14h-2.2zM15 5v14L5.5 12z",
  play: "M7 4.5v15L19.5 12z",
  pause: "M6.5 5h4v14h-4zM13.5 5h4v14h-4z",
  next: "M5.3 5h2.2v14H5.3zM9 5v14l9.5-7z",
  last: "M3.5 5v14l6.5-7zM11 5v14l6.5-7zM17.8 5H20v14h-2.2z",
};

/** A button icon (hidden from assistive technology: the button is labelled). */
export function icon(name) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "18");
  svg.setAttribute("height", "18");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "icon");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", ICONS[name]);
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}
