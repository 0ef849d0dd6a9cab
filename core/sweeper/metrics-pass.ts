/**
 * The sweeper's queue metrics, every Nth pass: read (one script call, about 9 billed commands a
 * queue) only for the queues swept since the last report, and for those never read by this
 * container; a queue the attention index kept idle has not changed since, so its last report is
 * told again, with nothing completed, failed or recovered since. An idle deployment's reports cost
 * nothing after the container's first.
 */
import { type QueueMetrics, readQueueMetrics } from "../queue/queue-metrics.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import type { QueueSweep } from "./sweep.ts";

/** A queue's metrics as reported: its state, and what finished and stalled since the last report. */
export interface QueueReport extends Omit<QueueMetrics, "completedSinceLastRead" | "failedSinceLastRead"> {
  completedSinceLastPass: number;
  failedSinceLastPass: number;
  stalledRecovered: number;
}

/** What the metrics know of a configured queue. */
interface MeteredQueue {
  name: string;
  deadLetterQueue?: string;
}

export class MetricsPass {
  private passes = 0;
  private readonly stalled = new Map<string, number>();
  private readonly touched = new Set<string>();
  private readonly last = new Map<string, QueueReport>();

  constructor(
    private readonly prefix: string,
    private readonly queues: readonly MeteredQueue[],
    private readonly every: number,
    private readonly report: ((reports: QueueReport[], now: number) => void) | undefined,
  ) {}

  /** Counts a pass (its swept queues); every `every`th pass reports every queue. */
  async count(port: RedisPort, swept: readonly QueueSweep[], now: number): Promise<void> {
    for (const s of swept) {
      this.stalled.set(s.queue, (this.stalled.get(s.queue) ?? 0) + s.stalled.length);
      this.touched.add(s.queue);
    }
    if (!this.report || this.every === 0 || ++this.passes < this.every) return;
    this.passes = 0;
    const toRead = this.queues.filter((q) => this.touched.has(q.name) || !this.last.has(q.name));
    this.touched.clear();
    const read =
      toRead.length === 0
        ? []
        : await readQueueMetrics(
            port,
            this.prefix,
            toRead.map((q) => ({ name: q.name, deadLetterQueue: q.deadLetterQueue })),
          );
    for (const { completedSinceLastRead, failedSinceLastRead, ...state } of read) {
      this.last.set(state.queue, {
        ...state,
        completedSinceLastPass: completedSinceLastRead,
        failedSinceLastPass: failedSinceLastRead,
        stalledRecovered: this.stalled.get(state.queue) ?? 0,
      });
      this.stalled.set(state.queue, 0);
    }
    const fresh = new Set(read.map((r) => r.queue));
    const reports = this.queues.flatMap((q) => {
      const known = this.last.get(q.name);
      if (!known) return [];
      if (fresh.has(q.name)) return [known];
      return [{ ...known, completedSinceLastPass: 0, failedSinceLastPass: 0, stalledRecovered: 0 }];
    });
    this.report(reports, now);
  }
}
