/**
 * The `?wait=` requests of one HTTP app share their polling (issue 24): per queue, one read of the
 * queue's event stream a round tells every waiting request whose job completed, failed for good or
 * was removed — a QueueEvents listener's cost, however many requests wait, where each request used to
 * poll its own job hash. Rounds start 100 ms apart and slow to one a second, so an answer comes at
 * most a round after the event.
 *
 * A request registers before it reads the job, so an event after that read is never missed: a watch
 * that starts reads from a little before its first request (the stream's ids are Redis's clock; the
 * clock check warns beyond 2 s of skew), a running one from the last entry it saw. When the stream
 * has said nothing for 5 s (a quiet queue, or workers that write no events), each request still
 * waiting reads its job hash once, then again every 5 s.
 */
import type { RedisPort } from "../../core/index.ts";
import { jobKey, queueKeys } from "../../core/internal.ts";

export type WaitOutcome = "finished" | "gone" | "deadline";

const firstRoundMs = 100;
const slowestRoundMs = 1_000;
const quietCheckMs = 5_000;
const pageSize = 1_000;
const cursorMarginMs = 2_000;

interface Waiter {
  readonly id: string;
  readonly since: number;
  checkedAt: number;
  settle(outcome: WaitOutcome): void;
}

/** What a request holds while it waits: its wait, and its way out. */
export interface JobWaitHandle {
  /** Resolves when the job finishes or goes, or at `deadline`, or when `signal` aborts. */
  until(deadline: number, signal?: AbortSignal): Promise<WaitOutcome>;
  /** Leaves the watch (the request answered, or its first read found the job finished). */
  stop(): void;
}

function fieldOf(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

function outcomeOf(fields: readonly string[]): WaitOutcome | undefined {
  const event = fieldOf(fields, "event");
  if (event === "completed" || event === "failed") return "finished";
  if (event === "removed") return "gone";
  return undefined;
}

/** One queue's watch: its waiters, and the loop that reads the stream for them while there are any. */
class QueueWatch {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private cursor: string | undefined;
  private heardAt = 0;
  private running = false;
  private hurry: (() => void) | undefined;

  constructor(
    private readonly port: RedisPort & Required<Pick<RedisPort, "xrange">>,
    private readonly events: string,
    private readonly hashKey: (id: string) => string,
  ) {}

  add(waiter: Waiter): void {
    const set = this.waiters.get(waiter.id) ?? new Set();
    this.waiters.set(waiter.id, set.add(waiter));
    if (this.running) this.hurry?.();
    else void this.run();
  }

  remove(waiter: Waiter): void {
    const set = this.waiters.get(waiter.id);
    set?.delete(waiter);
    if (set?.size === 0) this.waiters.delete(waiter.id);
  }

  private settle(id: string, outcome: WaitOutcome): void {
    for (const waiter of this.waiters.get(id) ?? []) waiter.settle(outcome);
    this.waiters.delete(id);
  }

  /** Sleeps a round, or less when a new request arrives (its first answer should come soon). */
  private pause(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.hurry = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  private async run(): Promise<void> {
    this.running = true;
    let round = firstRoundMs;
    try {
      while (this.waiters.size > 0) {
        if (await this.pause(round)) round = firstRoundMs;
        if (this.waiters.size === 0) break;
        try {
          await this.readEvents();
          await this.checkQuietOnes();
        } catch {
          // A read failed past the client's retries: the waits end at their deadlines if it stays so.
        }
        round = Math.min(slowestRoundMs, Math.round(round * 1.5));
      }
    } finally {
      this.running = false;
      this.hurry = undefined;
      this.cursor = undefined;
    }
  }

  private startCursor(): string {
    let earliest = Number.POSITIVE_INFINITY;
    for (const set of this.waiters.values())
      for (const waiter of set) earliest = Math.min(earliest, waiter.since);
    return `${Math.max(0, earliest - cursorMarginMs)}-0`;
  }

  private async readEvents(): Promise<void> {
    for (;;) {
      const start = this.cursor === undefined ? this.startCursor() : `(${this.cursor}`;
      const entries = await this.port.xrange(this.events, start, "+", pageSize);
      for (const [entryId, fields] of entries) {
        this.cursor = entryId;
        const id = fieldOf(fields, "jobId");
        const outcome = outcomeOf(fields);
        if (id !== undefined && outcome !== undefined && this.waiters.has(id)) this.settle(id, outcome);
      }
      if (entries.length > 0) this.heardAt = Date.now();
      if (entries.length < pageSize || this.waiters.size === 0) return;
    }
  }

  /** While the stream is quiet, each waiter's job hash is read every few seconds. */
  private async checkQuietOnes(): Promise<void> {
    const now = Date.now();
    if (now - this.heardAt < quietCheckMs) return;
    for (const [id, set] of [...this.waiters]) {
      const due = [...set].some((waiter) => now - waiter.checkedAt >= quietCheckMs);
      if (!due) continue;
      for (const waiter of set) waiter.checkedAt = now;
      const flat = await this.port.hgetall(this.hashKey(id));
      if (flat.length === 0) this.settle(id, "gone");
      else if (fieldOf(flat, "finishedOn") !== undefined) this.settle(id, "finished");
    }
  }
}

/** The waits of one HTTP app: one watch per queue, made when a request first waits on it. */
export class JobWatch {
  private readonly queues = new Map<string, QueueWatch>();

  /** False when the client cannot read streams (a custom port without XRANGE). */
  static canWatch(port: RedisPort): port is RedisPort & Required<Pick<RedisPort, "xrange">> {
    return typeof port.xrange === "function";
  }

  constructor(
    private readonly port: RedisPort & Required<Pick<RedisPort, "xrange">>,
    private readonly prefix: string,
  ) {}

  /** Registers a wait for job `id` of `queue`; read the job after this, then `until` if it is not done. */
  start(queue: string, id: string): JobWaitHandle {
    let watch = this.queues.get(queue);
    if (!watch) {
      const keys = queueKeys(this.prefix, queue);
      watch = new QueueWatch(this.port, keys.events, (job) => jobKey(this.prefix, queue, job));
      this.queues.set(queue, watch);
    }
    const queueWatch = watch;
    let settle: (outcome: WaitOutcome) => void = () => {};
    const settled = new Promise<WaitOutcome>((resolve) => {
      settle = resolve;
    });
    const now = Date.now();
    const waiter: Waiter = { id, since: now, checkedAt: now, settle: (outcome) => settle(outcome) };
    queueWatch.add(waiter);
    return {
      until: async (deadline, signal) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<WaitOutcome>((resolve) => {
          timer = setTimeout(() => resolve("deadline"), Math.max(0, deadline - Date.now()));
          signal?.addEventListener("abort", () => resolve("deadline"), { once: true });
        });
        try {
          return await Promise.race([settled, late]);
        } finally {
          clearTimeout(timer);
          queueWatch.remove(waiter);
        }
      },
      stop: () => queueWatch.remove(waiter),
    };
  }
}
