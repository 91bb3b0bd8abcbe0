// What the tests share about games.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Code, GameError } from "../../src/index.js";

/** A 64-hex-digit seed named by `label`, so that each test plays the same game every run. */
export function seedOf(label: string): string {
  return createHash("sha256").update(`carcassonne ts client test ${label}`).digest("hex");
}

/** The GameError that `call` rejects with. */
export async function rejection(call: () => Promise<unknown>): Promise<GameError> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof GameError, `expected a GameError, got ${String(error)}`);
    return error;
  }
  assert.fail("the call succeeded");
}

/** Asserts the code and reason of `error` (and that it comes from our domain). */
export function assertReason(error: GameError, code: Code, reason: string): void {
  assert.equal(error.codeName, new GameError(code, "").codeName, `code of ${error.message}`);
  assert.equal(error.reason, reason, `reason of ${error.message}`);
  assert.equal(error.domain, "carcassonne.v1");
}
