/**
 * Every script takes the current time from its caller (ARGV `now`): due times, lease ages, rate-limit
 * windows and the stalled check compare times written by different machines, so their clocks must
 * agree within well under a second. Lambda's and Upstash's clocks are kept by NTP; a laptop or a
 * container that drifted is the usual culprit. `createRedis` reads the REST server's `Date` header
 * once per URL (a HEAD request, which runs no command) and warns once when it is off by more than 2 s.
 */

const warnAboveMs = 2000;
const checked = new Set<string>();

export interface ClockCheck {
  clock?: () => number;
  warn?: (message: string) => void;
  fetch?: typeof fetch;
}

/**
 * The least the two clocks can differ by (ms), from a `Date` header (whole seconds, so the server's
 * time lay within the second it names) and the local times the request was sent and answered.
 */
export function leastSkewMs(serverDate: number, sentAt: number, answeredAt: number): number {
  const local = (sentAt + answeredAt) / 2;
  const uncertainty = (answeredAt - sentAt) / 2;
  const distance = Math.abs(local - (serverDate + 500)) - 500 - uncertainty;
  return Math.max(0, Math.round(distance));
}

/** Checks once per URL, in the background; never throws, never delays a command. */
export function checkClockOnce(url: string, options: ClockCheck = {}): Promise<void> {
  if (checked.has(url)) return Promise.resolve();
  checked.add(url);
  const clock = options.clock ?? Date.now;
  const run = async () => {
    const sentAt = clock();
    const answer = await (options.fetch ?? fetch)(url, { method: "HEAD", signal: AbortSignal.timeout(5000) });
    const answeredAt = clock();
    const date = Date.parse(answer.headers.get("date") ?? "");
    if (!Number.isFinite(date)) return;
    const skew = leastSkewMs(date, sentAt, answeredAt);
    if (skew <= warnAboveMs) return;
    const host = new URL(url).host;
    const ahead = answeredAt > date ? "ahead of" : "behind";
    (options.warn ?? console.warn)(
      `nimbusq: this machine's clock is at least ${(skew / 1000).toFixed(1)} s ${ahead} ${host}'s: ` +
        "nimbusq's scripts take the time from the caller, so due times, leases and rate limits will be off " +
        "by as much. Keep the clocks in sync (NTP).",
    );
  };
  return run().catch(() => {});
}
