/**
 * Polls `probe` until it answers something truthy, and returns that; throws naming `what` once
 * `timeoutMs` has passed (every wait in a test is bounded).
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  { timeoutMs = 20_000, everyMs = 25 } = {},
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
