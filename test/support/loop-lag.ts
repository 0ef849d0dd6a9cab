/**
 * How long the event loop was blocked while `during` ran: the worst lateness of a 20 ms timer. A
 * worker's lease extensions and acks can go out no sooner than that.
 */
export async function loopLag<T>(during: () => Promise<T>): Promise<{ result: T; maxLagMs: number }> {
  let last = Date.now();
  let maxLagMs = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    maxLagMs = Math.max(maxLagMs, now - last - 20);
    last = now;
  }, 20);
  try {
    return { result: await during(), maxLagMs };
  } finally {
    clearInterval(timer);
  }
}
