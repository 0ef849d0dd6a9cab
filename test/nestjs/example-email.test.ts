/**
 * examples/nestjs-email, compiled as a Nest app is and run against the test run's redis: the real Nest
 * HTTP app (platform-express, on a free port) answers 202 at once and 400 for a bad body, the processor retries a refused mail with exponential backoff, and the
 * report pattern keeps a report job's window across retries and late runs, scheduler iterations too.
 */
import type { AddressInfo } from "node:net";
import type { DynamicModule, INestApplication } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActiveJob, type Job, Queue, type UpstashRedisLike } from "../../core/index.ts";
import type { ReportWindow } from "../../examples/nestjs-email/src/report-window.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";
import { until } from "../support/waiting.ts";
import { type CompiledApps, compileApps } from "./compile-apps.ts";

// The example's shapes as this test uses them (its sources have decorators; compile-apps.ts checks them).
type Ctor<T> = new (...args: never[]) => T;
interface Example {
  AppModule: { register(options: { redis: UpstashRedisLike; prefix: string }): DynamicModule };
  MailTransport: Ctor<{ sent: { to: string }[]; failPattern: RegExp }>;
  ReportStore: Ctor<{ queries: ReportWindow[]; failNext: number }>;
  ReportScheduler: Ctor<{
    enqueueDailyReport(now?: number): Promise<Job>;
    scheduleDailyReport(): Promise<Job | undefined>;
  }>;
  dailyWindow(at: number): ReportWindow;
  windowOf(job: Pick<ActiveJob, "scheduledAt" | "timestamp"> & { data: Partial<ReportWindow> }): ReportWindow;
}

const src = "examples/nestjs-email/src";
let compiled: CompiledApps;
let example: Example;
let app: INestApplication;
let baseUrl: string;
let prefix: string;
const redis = () => sharedRedis();

beforeAll(async () => {
  compiled = compileApps(
    [`${src}/app.module.ts`, `${src}/email.controller.ts`, `${src}/main.ts`, `${src}/lambda.ts`],
    "example",
  );
  example = {
    ...(await compiled.load(`${src}/app.module.ts`)),
    ...(await compiled.load(`${src}/mail-transport.ts`)),
    ...(await compiled.load(`${src}/report.ts`)),
    ...(await compiled.load(`${src}/report-window.ts`)),
  } as unknown as Example;
  prefix = uniquePrefix("example");
  // As main.ts does, on a free port of the loopback interface.
  app = await NestFactory.create(example.AppModule.register({ redis: redis(), prefix }), { logger: false });
  await app.listen(0, "127.0.0.1");
  baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await app?.close();
  compiled?.remove();
});

const finished = (queue: Queue, id: string) =>
  until(`job ${id} to finish`, async () => {
    const job = await queue.getJob(id);
    return job?.finishedOn ? job : undefined;
  });

describe("examples/nestjs-email", () => {
  it("POST /send-email answers 202 { jobId, status: 'queued' }; the processor retries a refused mail with backoff", async () => {
    const post = (body: unknown) =>
      fetch(`${baseUrl}/send-email`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const response = await post({ to: "flaky@example.com", subject: "hello" });
    expect(response.status).toBe(202);
    const answer = (await response.json()) as { jobId: string; status: string };
    expect(answer).toEqual({ jobId: expect.any(String), status: "queued" });

    const bad = await post({ to: "not an address", subject: "hello" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: expect.stringContaining("to must be"), field: "to" });
    const noSubject = await post({ to: "someone@example.com" });
    expect(noSubject.status).toBe(400);
    expect(await noSubject.json()).toMatchObject({ field: "subject" });

    const queue = new Queue("nest-email", { redis: redis(), prefix });
    const job = await finished(queue, answer.jobId);
    expect(await queue.getJobState(answer.jobId)).toBe("completed");
    expect(job.attemptsMade).toBe(3);
    expect(job.opts.backoff).toEqual({ type: "exponential", delay: 1000 });
    // Two refusals, the backoff between the tries doubling: 1 s, then 2 s.
    expect((job.processedOn ?? 0) - job.timestamp).toBeGreaterThanOrEqual(3000);
    expect(app.get(example.MailTransport).sent).toEqual([{ to: "flaky@example.com", subject: "hello" }]);
  });

  it("a report job enqueued with its window keeps it through a retry and a late run", async () => {
    const store = app.get(example.ReportStore);
    store.queries.length = 0;
    store.failNext = 1;
    const enqueuedAt = Date.UTC(2026, 0, 15, 6, 0, 0);
    const job = await app.get(example.ReportScheduler).enqueueDailyReport(enqueuedAt);
    const window = { windowStart: Date.UTC(2026, 0, 14), windowEnd: Date.UTC(2026, 0, 15) };
    expect(job.data).toEqual(window);

    const done = await finished(new Queue("nest-reports", { redis: redis(), prefix }), job.id);
    expect(done.attemptsMade).toBe(2);
    expect(store.queries).toEqual([window, window]);
    expect(done.returnvalue).toEqual({ ...window, mails: 0 });
  });

  it("a cron iteration's window comes from its planned time, through a retry, whenever it runs", async () => {
    const store = app.get(example.ReportStore);
    store.queries.length = 0;
    store.failNext = 1;
    const iteration = await app.get(example.ReportScheduler).scheduleDailyReport();
    if (!iteration) throw new Error("the scheduler made no iteration");
    const planned = iteration.scheduledAt as number;
    expect(new Date(planned).toISOString()).toMatch(/T06:00:00\.000Z$/);
    expect(planned).toBeGreaterThan(Date.now());
    const window = example.dailyWindow(planned);
    expect(window.windowEnd).toBe(planned - 6 * 60 * 60 * 1000);

    await iteration.promote(); // run it now, hours before its planned time: the window must not move
    const done = await finished(new Queue("nest-reports", { redis: redis(), prefix }), iteration.id);
    expect(done.attemptsMade).toBe(2);
    expect(store.queries).toEqual([window, window]);
    expect(done.returnvalue).toMatchObject(window);
  });

  it("windowOf prefers the window carried in job.data", () => {
    const carried = { windowStart: 1, windowEnd: 2 };
    expect(example.windowOf({ data: carried, scheduledAt: 5e12, timestamp: 6e12 })).toEqual(carried);
    expect(
      example.windowOf({ data: {}, scheduledAt: undefined, timestamp: Date.UTC(2026, 2, 3, 12) }),
    ).toEqual(example.dailyWindow(Date.UTC(2026, 2, 3)));
  });
});
