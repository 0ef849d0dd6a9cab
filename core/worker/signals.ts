/** The abort signals a worker's drains and runs share: a sleep that ends early, and two signals as one. */

/** Resolves after `ms`, or at once when the signal fires. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** A signal that fires when either does; `release` unhooks it from both (call it when done). */
export function linkSignals(
  first: AbortSignal,
  second: AbortSignal | undefined,
): { signal: AbortSignal; release: () => void } {
  if (!second) return { signal: first, release: () => {} };
  const both = new AbortController();
  const abort = () => both.abort();
  for (const signal of [first, second]) {
    if (signal.aborted) both.abort();
    else signal.addEventListener("abort", abort, { once: true });
  }
  const release = () => {
    for (const signal of [first, second]) signal.removeEventListener("abort", abort);
  };
  return { signal: both.signal, release };
}
