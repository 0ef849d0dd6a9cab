/**
 * Fault injection for tests of what a real network and a real Upstash do to a client: requests that
 * never arrive, requests that ran but whose answer was lost (the client retries, so the command runs
 * twice), slow answers and misbehaving proxies.
 */

/**
 * - `fail-before`: destroy the socket without running anything (the client retries).
 * - `drop-after`: run the command(s), then destroy the socket without answering.
 * - `delay`: wait `delayMs` before running.
 * - `delay-answer`: run at once, then hold the answer back `delayMs` (a slow network, a frozen caller).
 * - `status-500`: answer 500 with a JSON error, without running.
 * - `status-503`: answer 503 with an HTML page (as a proxy would), without running.
 *
 * `times` is how many matching requests are affected (unlimited until cleared when absent); `command`
 * limits the fault to requests containing a command of that name (case-insensitive); `every` = N
 * affects only every Nth matching request (the others pass), so a retried request gets through.
 */
export type Fault =
  | {
      kind: "fail-before" | "drop-after" | "status-500" | "status-503";
      times?: number;
      command?: string;
      every?: number;
    }
  | { kind: "delay" | "delay-answer"; delayMs: number; times?: number; command?: string; every?: number };

const KINDS = new Set(["fail-before", "drop-after", "status-500", "status-503", "delay", "delay-answer"]);

/** Validates a fault sent as JSON to the admin route; throws a message naming the problem. */
export function parseFault(value: unknown): Fault | null {
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) throw new Error("a fault must be an object or null");
  const { kind, times, command, delayMs, every } = value as Record<string, unknown>;
  if (typeof kind !== "string" || !KINDS.has(kind)) {
    throw new Error(`fault kind must be one of ${[...KINDS].join(", ")}`);
  }
  if (times !== undefined && !(Number.isInteger(times) && (times as number) > 0)) {
    throw new Error("fault times must be a positive integer");
  }
  if (command !== undefined && (typeof command !== "string" || command === "")) {
    throw new Error("fault command must be a non-empty string");
  }
  if (every !== undefined && !(Number.isInteger(every) && (every as number) > 0)) {
    throw new Error("fault every must be a positive integer");
  }
  const scope: { times?: number; command?: string; every?: number } = {};
  if (typeof times === "number") scope.times = times;
  if (typeof every === "number") scope.every = every;
  if (typeof command === "string") scope.command = command;
  if (kind === "delay" || kind === "delay-answer") {
    if (typeof delayMs !== "number" || !Number.isFinite(delayMs) || delayMs < 0) {
      throw new Error(`a ${kind} fault needs delayMs >= 0`);
    }
    return { kind, delayMs, ...scope };
  }
  return { kind: kind as Exclude<Fault["kind"], "delay" | "delay-answer">, ...scope };
}

export class FaultInjector {
  private fault: Fault | null = null;
  private remaining = Number.POSITIVE_INFINITY;
  private matched = 0;

  set(fault: Fault | null): void {
    this.fault = fault;
    this.remaining = fault?.times ?? Number.POSITIVE_INFINITY;
    this.matched = 0;
  }

  /** The fault to apply to a request carrying these commands, if any; uses up one of its `times`. */
  take(commandNames: readonly string[]): Fault | null {
    const fault = this.fault;
    if (!fault) return null;
    const wanted = fault.command?.toLowerCase();
    if (wanted !== undefined && !commandNames.includes(wanted)) return null;
    this.matched += 1;
    if (this.matched % (fault.every ?? 1) !== 0) return null;
    this.remaining -= 1;
    if (this.remaining <= 0) this.fault = null;
    return fault;
  }
}
