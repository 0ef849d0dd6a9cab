/**
 * The daily report: enqueued by hand with its window in job.data, or made every day at 06:00 UTC by a
 * cron job scheduler, each iteration's window coming from its planned time.
 */
import { Injectable, Logger } from "@nestjs/common";
import type { ActiveJob, Queue } from "nimbusq";
import { InjectQueue, Processor, WorkerHost } from "nimbusq/nestjs";
import { reportsQueue } from "./queues.js";
import { dailyWindow, type ReportWindow, windowOf } from "./report-window.js";

/** Stand-in for the database the report reads; it records each query's window. */
@Injectable()
export class ReportStore {
  readonly queries: ReportWindow[] = [];
  /** How many of the next queries fail (a database hiccup), to show a retry. */
  failNext = 0;

  async countMailsBetween(window: ReportWindow): Promise<number> {
    this.queries.push(window);
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error("database unavailable");
    }
    return 0;
  }
}

@Injectable()
export class ReportScheduler {
  constructor(@InjectQueue(reportsQueue) private readonly queue: Queue<Partial<ReportWindow>>) {}

  /** A report for the day before `now`, its window fixed now. */
  async enqueueDailyReport(now = Date.now()) {
    return await this.queue.add("daily-report", dailyWindow(now), {
      attempts: 3,
      backoff: { type: "exponential", delay: 1000 },
    });
  }

  /** Every day at 06:00 UTC; iterations carry no window: it comes from each one's planned time. */
  async scheduleDailyReport() {
    return await this.queue.upsertJobScheduler(
      "daily-report",
      { pattern: "0 6 * * *", tz: "UTC" },
      {
        name: "daily-report",
        data: {},
        opts: { attempts: 3, backoff: { type: "exponential", delay: 1000 } },
      },
    );
  }
}

@Processor(reportsQueue)
export class ReportProcessor extends WorkerHost {
  private readonly logger = new Logger(ReportProcessor.name);

  constructor(private readonly store: ReportStore) {
    super();
  }

  async process(job: ActiveJob<Partial<ReportWindow>>): Promise<ReportWindow & { mails: number }> {
    const window = windowOf(job);
    const mails = await this.store.countMailsBetween(window);
    this.logger.log(
      `report ${job.id}: ${new Date(window.windowStart).toISOString()} – ${new Date(window.windowEnd).toISOString()}`,
    );
    return { ...window, mails };
  }
}
