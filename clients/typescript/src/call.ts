// What every call shares: the seat's metadata and the retry policy.

/** How UNAVAILABLE answers (server restarting, storage full, connection
 * lost) are retried: the same request again, after a growing pause. */
export interface RetryPolicy {
  /** Tries in all, the first included (1: no retry). */
  attempts: number;
  /** The pause before the first retry; it doubles up to maxBackoffMs. */
  initialBackoffMs: number;
  maxBackoffMs: number;
}

/** About 9 s of pauses over 9 retries: a server restart fits in it. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 10, initialBackoffMs: 50, maxBackoffMs: 2_000 };

/** The metadata that makes a call a seat's: none for a spectator. */
export function authorization(token: string | undefined): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** The pause before retry number `attempt` (from 1). */
export function backoffMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** (attempt - 1));
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
