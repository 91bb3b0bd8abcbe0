// The board picture in a viewport that pans and zooms: mouse wheel and
// drag, touch pinch and drag, the +/- buttons and keys. It fits the picture
// to the viewport until the viewer moves it ("Fit" brings that back).

import { backoff } from "./api.js";
import { el } from "./words.js";

const MIN_SCALE = 0.05;
const MAX_SCALE = 8;

export class BoardView {
  constructor() {
    this.scale = 1;
    this.x = 0;
    this.y = 0;
    this.fitting = true;
    this.wanted = null; // the address last asked for
    this.pointers = new Map();

    this.image = el("img", { class: "board-image", alt: "The board", draggable: "false", decoding: "async" });
    this.viewport = el(
      "div",
      {
        class: "board-viewport",
        tabindex: "0",
        role: "region",
        "aria-label": "The board: drag to move it; the mouse wheel, a pinch or the + and − keys zoom, 0 fits it",
      },
      this.image,
    );
    const button = (label, text, action) =>
      el("button", { type: "button", class: "icon-button", "aria-label": label, title: label, onclick: action }, text);
    this.controls = el(
      "div",
      { class: "board-controls" },
      button("Zoom in", "+", () => this.zoomBy(1.25)),
      button("Zoom out", "−", () => this.zoomBy(0.8)),
      button("Fit the board to the view", "Fit", () => this.fit()),
    );
    this.element = el("div", { class: "board" }, this.viewport, this.controls);

    this.viewport.addEventListener("wheel", (event) => this.onWheel(event), { passive: false });
    this.viewport.addEventListener("pointerdown", (event) => this.onPointerDown(event));
    this.viewport.addEventListener("pointermove", (event) => this.onPointerMove(event));
    for (const type of ["pointerup", "pointercancel", "pointerleave"]) {
      this.viewport.addEventListener(type, (event) => this.onPointerUp(event));
    }
    this.viewport.addEventListener("keydown", (event) => this.onKey(event));
    this.viewport.addEventListener("dblclick", () => this.fit());
    new ResizeObserver(() => {
      if (this.fitting) this.fit();
    }).observe(this.viewport);
  }

  /**
   * Shows the picture at `url` once it is loaded, so that stepping through
   * versions never flashes an empty board.
   */
  show(url, alt) {
    if (url === this.wanted) return Promise.resolve();
    this.wanted = url;
    // Pictures asked for in quick succession (a live game, a fast replay)
    // show as they arrive, a newer request's never replaced by an older's.
    const sequence = (this.requested = (this.requested ?? 0) + 1);
    const next = new Image();
    next.src = url;
    return next
      .decode()
      .then(() => next.naturalWidth > 0)
      .catch(() => false)
      .then((loaded) => {
        if (!loaded) {
          if (this.wanted !== url) return;
          // Keep the previous picture, and try again while it is wanted
          // (the server may be down for a while).
          this.failures = (this.failures ?? 0) + 1;
          setTimeout(() => {
            if (this.wanted !== url) return;
            this.wanted = null;
            this.show(url, alt);
          }, backoff(Math.min(this.failures, 5)));
          return;
        }
        if (sequence <= (this.displayed ?? 0)) return;
        this.displayed = sequence;
        this.failures = 0;
        // The loaded image itself takes the old one's place: what shows is
        // exactly what was loaded, with no second request.
        next.className = "board-image";
        next.alt = alt;
        next.draggable = false;
        next.dataset.src = url;
        next.style.transform = this.image.style.transform;
        this.image.replaceWith(next);
        this.image = next;
        if (this.fitting) this.fit();
        else this.apply();
      });
  }

  naturalSize() {
    return { width: this.image.naturalWidth || 1, height: this.image.naturalHeight || 1 };
  }

  fit() {
    this.fitting = true;
    const box = this.viewport.getBoundingClientRect();
    const { width, height } = this.naturalSize();
    if (!box.width || !box.height) return;
    const pad = 12;
    this.scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, Math.min((box.width - pad * 2) / width, (box.height - pad * 2) / height)));
    this.x = (box.width - width * this.scale) / 2;
    this.y = (box.height - height * this.scale) / 2;
    this.apply();
  }

  apply() {
    this.image.style.transform = `translate(${this.x}px, ${this.y}px) scale(${this.scale})`;
  }

  /** Zooms by `factor` keeping the point (px, py) of the viewport still. */
  zoomBy(factor, px, py) {
    const box = this.viewport.getBoundingClientRect();
    const cx = px ?? box.width / 2;
    const cy = py ?? box.height / 2;
    const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, this.scale * factor));
    const applied = scale / this.scale;
    this.x = cx - (cx - this.x) * applied;
    this.y = cy - (cy - this.y) * applied;
    this.scale = scale;
    this.fitting = false;
    this.apply();
  }

  panBy(dx, dy) {
    this.x += dx;
    this.y += dy;
    this.fitting = false;
    this.apply();
  }

  onWheel(event) {
    event.preventDefault();
    const box = this.viewport.getBoundingClientRect();
    const delta = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
    this.zoomBy(Math.exp(-delta * 0.0015), event.clientX - box.left, event.clientY - box.top);
  }

  onPointerDown(event) {
    try {
      this.viewport.setPointerCapture(event.pointerId);
    } catch {
      // a pointer the browser does not track (synthetic): no capture
    }
    this.pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    this.viewport.classList.add("dragging");
  }

  onPointerMove(event) {
    const last = this.pointers.get(event.pointerId);
    if (!last) return;
    const now = { x: event.clientX, y: event.clientY };
    if (this.pointers.size === 1) {
      this.panBy(now.x - last.x, now.y - last.y);
    } else if (this.pointers.size === 2) {
      const [other] = [...this.pointers.entries()].filter(([id]) => id !== event.pointerId).map(([, p]) => p);
      const before = Math.hypot(last.x - other.x, last.y - other.y);
      const after = Math.hypot(now.x - other.x, now.y - other.y);
      const box = this.viewport.getBoundingClientRect();
      if (before > 0) {
        this.zoomBy(after / before, (now.x + other.x) / 2 - box.left, (now.y + other.y) / 2 - box.top);
      }
      this.panBy((now.x - last.x) / 2, (now.y - last.y) / 2);
    }
    this.pointers.set(event.pointerId, now);
  }

  onPointerUp(event) {
    this.pointers.delete(event.pointerId);
    if (this.pointers.size === 0) this.viewport.classList.remove("dragging");
  }

  onKey(event) {
    const keys = { "+": 1.25, "=": 1.25, "-": 0.8, _: 0.8 };
    if (keys[event.key]) {
      this.zoomBy(keys[event.key]);
      event.preventDefault();
    } else if (event.key === "0") {
      this.fit();
      event.preventDefault();
    }
  }
}
