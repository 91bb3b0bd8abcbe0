// The server's clock as the page estimates it. The server's clock is the
// only authority on time (docs/rules.md, T-1): a clock shown counts down
// from the server's figures (`time_left_ms` as of `clock_time_ms`,
// `deadline_ms`) to the server's "now", which this module estimates.
//
// Why an offset estimated from the server's own times rather than a count
// from the moment a version arrived: a version read when the page opens
// may be minutes or days old (a correspondence game waits a day a
// decision), and its figures hold as of its last event, not as of its
// arrival; only the server's now tells how much has run since. The
// browser's clock may be off by any amount, so the offset is bounded from
// both sides and narrowed with every sample:
// - each HTTP answer's `Date` (whole seconds) was written between the
//   request's sending and the answer's arrival: it bounds the offset both
//   ways, within a second plus the round trip;
// - each event of a live stream arrives after it was stored (`time_ms`):
//   an upper bound, as tight as the stream's latency.
// The estimate is the middle of what every sample allows. A sample that
// contradicts the others (the browser's clock was set, or the computer
// slept) starts the estimate anew from it. A page that shows a running
// clock calibrates: it asks a few times more, each answer timed to be
// written at a change of the server's second, which halves the range.

// The offset, browser clock minus server clock, lies in [low, high].
let low = -Infinity;
let high = Infinity;

function narrow(sampleLow, sampleHigh) {
  const newLow = Math.max(low, sampleLow);
  const newHigh = Math.min(high, sampleHigh);
  if (newLow > newHigh) {
    low = sampleLow;
    high = sampleHigh;
  } else {
    low = newLow;
    high = newHigh;
  }
}

/**
 * An HTTP answer's `Date` header, with the browser's times just before the
 * request and just after the answer's headers.
 */
export function noteDateHeader(date, sentAt, receivedAt) {
  const stamp = Date.parse(date ?? "");
  if (!Number.isFinite(stamp)) return;
  // The server wrote `Date` at some moment in [stamp, stamp + 1000), after
  // `sentAt` and before `receivedAt` by the browser's clock.
  narrow(sentAt - (stamp + 1000), receivedAt - stamp);
}

/** An event stored at `timeMs` (server) arrived at `receivedAt` (browser). */
export function noteEventTime(timeMs, receivedAt) {
  if (!Number.isFinite(timeMs) || timeMs <= 0) return;
  // Arrival is after storage; how long after is unknown: an upper bound.
  // A catch-up of old events bounds nothing useful, and a live one is
  // tight. It never contradicts: an earlier bound is only lowered.
  if (receivedAt - timeMs < low) {
    low = -Infinity;
  }
  high = Math.min(high, receivedAt - timeMs);
}

const CALIBRATION_ROUNDS = 4;
const GOOD_ENOUGH_MS = 100;

/**
 * Narrows the estimate to a tenth of a second or so with a few requests
 * to `url` (a cheap answer), each sent so that the server's next second
 * begins, by the estimate so far, as it writes its `Date`. Failures are
 * ignored: the estimate is only less tight.
 */
export async function calibrate(url = "/api/health") {
  for (let round = 0; round < CALIBRATION_ROUNDS; round++) {
    if (high - low <= GOOD_ENOUGH_MS) return;
    const trip = lastTrip || 20;
    const offset = serverOffset();
    // The next server second, by the browser's clock, at least a round trip away.
    const nextSecond = Math.ceil((Date.now() - offset + trip) / 1000) * 1000;
    const sendAt = nextSecond + offset - trip / 2;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, sendAt - Date.now())));
    const sentAt = Date.now();
    try {
      const response = await fetch(url, { cache: "no-store" });
      const receivedAt = Date.now();
      lastTrip = receivedAt - sentAt;
      noteDateHeader(response.headers.get("date"), sentAt, receivedAt);
      await response.body?.cancel();
    } catch {
      return;
    }
  }
}

let lastTrip = 0;

/** The browser's clock minus the server's, as best known (0 without a sample). */
export function serverOffset() {
  if (Number.isFinite(low) && Number.isFinite(high)) return (low + high) / 2;
  if (Number.isFinite(high)) return high;
  if (Number.isFinite(low)) return low;
  return 0;
}

/** The server's now, in Unix milliseconds. */
export function serverNow() {
  return Date.now() - serverOffset();
}
