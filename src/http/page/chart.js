// The score-over-time chart: one stepped line per seat, drawn as inline SVG
// from the scores each watched event carries, with a marker at the version
// shown, each line ending in its seat's mark; the legend under it (HTML,
// so that it wraps on any width) names the seats with their scores.

import { el, seatMark, seatStyle } from "./words.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 380;
const HEIGHT = 190;
const LEFT = 30;
const RIGHT = 18; // room for the seats' marks at the lines' ends
const TOP = 8;
const BOTTOM = 20;

function node(tag, attributes = {}, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

/** A step on the axis: 1, 2, 5, 10, 20, 50 ... giving at most ~`count` ticks. */
function tickStep(max, count) {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  for (const factor of [1, 2, 5, 10]) if (factor * power >= raw) return factor * power;
  return 10 * power;
}

/** Each seat's line: its colour, and a dash pattern that tells it without colour. */
function lineStyle(seat) {
  return { stroke: seatStyle(seat).colour, "stroke-dasharray": ["", "6 2", "2 2", "8 2 2 2", "4 1.5"][seat % 5] };
}

/**
 * Draws into `svg` and `legend` (a list). `points` is a list of {version,
 * scores: [seat order]}, ascending; `names` the players' names; `shown`
 * the version marked.
 */
export function drawChart(svg, legend, points, names, shown) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
  const seats = names.length;
  const lastVersion = Math.max(2, points.at(-1)?.version ?? 2);
  let maxScore = 10;
  for (const point of points) for (const score of point.scores) maxScore = Math.max(maxScore, score);
  const step = tickStep(maxScore, 4);
  maxScore = Math.ceil(maxScore / step) * step;

  const x = (version) => LEFT + ((version - 1) / (lastVersion - 1)) * (WIDTH - LEFT - RIGHT);
  const y = (score) => TOP + (1 - score / maxScore) * (HEIGHT - TOP - BOTTOM);

  const grid = node("g", { class: "chart-grid" });
  for (let score = 0; score <= maxScore; score += step) {
    grid.append(node("line", { x1: LEFT, x2: WIDTH - RIGHT, y1: y(score), y2: y(score) }));
    grid.append(node("text", { x: LEFT - 6, y: y(score) + 4, "text-anchor": "end" }, String(score)));
  }
  const versionStep = tickStep(lastVersion, 6);
  for (let version = versionStep; version <= lastVersion; version += versionStep) {
    grid.append(node("text", { x: x(version), y: HEIGHT - 6, "text-anchor": "middle" }, String(version)));
  }
  svg.append(grid);

  const ends = [];
  for (let seat = 0; seat < seats; seat++) {
    let path = `M${x(1).toFixed(1)},${y(0).toFixed(1)}`;
    let previous = 0;
    for (const point of points) {
      const score = point.scores[seat] ?? previous;
      if (score !== previous) {
        path += `H${x(point.version).toFixed(1)}V${y(score).toFixed(1)}`;
        previous = score;
      }
    }
    path += `H${x(points.at(-1)?.version ?? 1).toFixed(1)}`;
    // A dark casing under each line keeps the light colours (yellow) legible.
    svg.append(node("path", { d: path, fill: "none", stroke: "#1b1b1b", "stroke-opacity": 0.55, "stroke-width": 3.6, "stroke-linejoin": "round" }));
    svg.append(
      node("path", {
        d: path,
        fill: "none",
        "stroke-width": 2,
        "stroke-linejoin": "round",
        ...lineStyle(seat),
      }),
    );
    ends.push({ seat, score: previous, name: names[seat] ?? "" });
  }
  // Marks at the lines' ends, nudged apart so that none overlaps; the
  // legend in the same order, highest score first.
  ends.sort((a, b) => b.score - a.score || a.seat - b.seat);
  const GAP = 12;
  const marksY = [];
  for (const end of ends) marksY.push(Math.max(y(end.score), (marksY.at(-1) ?? -Infinity) + GAP));
  // Back up from the bottom edge when the nudges went past it.
  for (let i = marksY.length - 1, limit = HEIGHT - 6; i >= 0; i--, limit -= GAP) marksY[i] = Math.min(marksY[i], limit);
  ends.forEach((end, i) => {
    const mark = seatMark(end.seat, 11);
    mark.setAttribute("x", WIDTH - RIGHT + 4);
    mark.setAttribute("y", marksY[i] - 5.5);
    svg.append(mark);
  });
  legend.replaceChildren(
    ...ends.map((end) =>
      el(
        "li",
        { "data-seat": String(end.seat) },
        legendLine(end.seat),
        seatMark(end.seat, 14),
        el("span", { class: "player-name" }, end.name),
        el("span", { class: "legend-score" }, String(end.score)),
      ),
    ),
  );
  if (shown) {
    const marker = x(Math.min(shown, lastVersion));
    svg.append(node("line", { x1: marker, x2: marker, y1: TOP, y2: HEIGHT - BOTTOM, class: "chart-marker" }));
  }
}

/** A short piece of a seat's line, as drawn in the chart. */
function legendLine(seat) {
  const svg = node("svg", { viewBox: "0 0 24 8", width: 24, height: 8, class: "legend-line", "aria-hidden": "true" });
  svg.append(node("line", { x1: 1, x2: 23, y1: 4, y2: 4, stroke: "#1b1b1b", "stroke-opacity": 0.55, "stroke-width": 3.6 }));
  svg.append(node("line", { x1: 1, x2: 23, y1: 4, y2: 4, "stroke-width": 2, ...lineStyle(seat) }));
  return svg;
}
