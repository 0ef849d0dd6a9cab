/**
 * nimbusq/nestjs against the real @nestjs/core and @nestjs/testing, with apps compiled as Nest apps
 * are (tsc, legacy decorators, decorator metadata) and the test run's redis through the REST server.
 */
import type { DynamicModule, INestApplicationContext, LoggerService } from "@nestjs/common";
import { Test } from "@nestjs/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FlowProducer,
  type Job,
  Queue,
  ShardMap,
  type UpstashRedisLike,
  type Worker,
} from "../../core/index.ts";
import type * as NestjsApi from "../../nestjs/index.ts";
import { lambdaContext } from "../support/aws-events.ts";
import { type AwsRecorder, startAwsRecorder } from "../support/aws-recorder.ts";
import { sharedRedis, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import { until } from "../support/waiting.ts";
import { type CompiledApps, compileApps } from "./compile-apps.ts";

let compiled: CompiledApps;
// The apps' shapes as this test uses them: their sources have decorators, which the root typecheck
// (no experimentalDecorators) must not follow; compile-apps.ts type-checks them.
type Ctor<T> = new (...args: never[]) => T;
interface TestModule {
  forTest(config: { redis: UpstashRedisLike; prefix: string }): DynamicModule;
}
interface Mail {
  tries: Map<string, number>;
}
interface EmailApp {
  EmailModule: TestModule;
  MailService: Ctor<Mail>;
  EmailProducer: Ctor<{
    queue: Queue<{ to: string }>;
    flows: FlowProducer;
    send(to: string, attempts?: number): Promise<Job>;
  }>;
  EmailProcessor: Ctor<{ mail: Mail; worker: Worker; completed: string[]; failures: string[] }>;
}
interface LifecycleApps {
  LifecycleModule: TestModule;
  LambdaModule: TestModule;
  Gate: Ctor<{ started: string[]; open(): void }>;
  ManualProcessor: Ctor<{ worker: Worker }>;
  LambdaEmailProcessor: Ctor<{ worker: Worker }>;
  Tally: Ctor<{ completed: string[] }>;
}

let email: EmailApp;
let lifecycle: LifecycleApps;
let api: typeof NestjsApi;
let recorder: AwsRecorder;

beforeAll(async () => {
  compiled = compileApps(["test/nestjs/apps/email-app.ts", "test/nestjs/apps/lifecycle-apps.ts"], "nestjs");
  email = await compiled.load("test/nestjs/apps/email-app.ts");
  lifecycle = await compiled.load("test/nestjs/apps/lifecycle-apps.ts");
  api = await compiled.load("nestjs/index.ts");
  recorder = await startAwsRecorder();
}, 180_000);

afterAll(async () => {
  await recorder?.close();
  compiled?.remove();
});

/** Keeps what Nest's Logger was given, so a test can see what was logged. */
class RecordingLogger implements LoggerService {
  readonly errors: string[] = [];
  log() {}
  warn() {}
  error(message: unknown) {
    this.errors.push(String(message));
  }
}

async function boot(module: DynamicModule, logger = new RecordingLogger()) {
  const app = await Test.createTestingModule({ imports: [module] })
    .setLogger(logger)
    .compile();
  await app.init();
  return { app: app as INestApplicationContext, logger };
}

describe("NimbusqModule in a long-running app", () => {
  it("injects Queue and FlowProducer, and services into processors by type through their constructors", async () => {
    const redis = sharedRedis();
    const prefix = uniquePrefix("nest");
    const { app } = await boot(email.EmailModule.forTest({ redis, prefix }));
    try {
      const producer = app.get(email.EmailProducer);
      expect(producer.queue).toBe(app.get(api.getQueueToken("email")));
      expect(producer.queue.name).toBe("email");
      expect(producer.queue.prefix).toBe(prefix);
      const processor = app.get(email.EmailProcessor);
      expect(processor.mail).toBeInstanceOf(email.MailService);
      expect(processor.mail).toBe(app.get(email.MailService));
      expect(processor.worker.name).toBe("email");
      expect(processor.worker.concurrency).toBe(2);

      const node = await producer.flows.add({
        name: "digest",
        queueName: "digest",
        data: {},
        children: [{ name: "part", queueName: "digest", data: { n: 1 } }],
      });
      const digest = new Queue("digest", { redis, prefix });
      expect(await digest.getJobState(node.job.id)).toBe("waiting-children");
      expect(await digest.getWaitingCount()).toBe(1);
    } finally {
      await app.close();
    }
  });

  it("takes a ShardMap as redis: the queue, its processor and flows work on the queue's database", async () => {
    const second = await startPrivateStack();
    const prefix = uniquePrefix("nest-shards");
    // "email" pinned to the second database; "digest" (the flow's queue) left to the hash, then read.
    const shards = new ShardMap({
      databases: { first: sharedRedis(), second: second.redis },
      queues: { email: "second" },
    });
    const { app } = await boot(email.EmailModule.forTest({ redis: shards as never, prefix }));
    try {
      const producer = app.get(email.EmailProducer);
      const job = await producer.send("shard@example.com");
      const processor = app.get(email.EmailProcessor);
      await until("the job completed", async () => processor.completed.includes(job.id as string));
      expect(await new Queue("email", { redis: second.redis, prefix }).getJobState(job.id as string)).toBe(
        "completed",
      );
      expect(
        await new Queue("email", { redis: sharedRedis(), prefix }).getJob(job.id as string),
      ).toBeUndefined();
      const node = await producer.flows.add({ name: "digest", queueName: "digest", data: {} });
      const on = shards.databaseOf("digest") === "second" ? second.redis : sharedRedis();
      expect(await new Queue("digest", { redis: on, prefix }).getJobState(node.job.id)).toBe("waiting");
    } finally {
      await app.close();
      await second.stop();
    }
  });

  it("retries a job with backoff until it succeeds; throwing listeners are logged and change nothing", async () => {
    const redis = sharedRedis();
    const prefix = uniquePrefix("nest");
    const { app, logger } = await boot(email.EmailModule.forTest({ redis, prefix }));
    try {
      const producer = app.get(email.EmailProducer);
      const flaky = await producer.send("flaky@example.com", 4);
      const plain = await producer.send("plain@example.com");
      const queue = new Queue("email", { redis, prefix });
      const done = await until("both jobs to complete", async () => {
        const jobs = await Promise.all([queue.getJob(flaky.id), queue.getJob(plain.id)]);
        return jobs.every((job) => job?.finishedOn) && jobs;
      });
      expect(await queue.getJobState(flaky.id)).toBe("completed");
      expect(done[0]).toMatchObject({ attemptsMade: 3, returnvalue: "sent to flaky@example.com" });
      expect(await queue.getJobState(plain.id)).toBe("completed");
      expect(done[1]).toMatchObject({ attemptsMade: 1, returnvalue: "sent to plain@example.com" });

      const processor = app.get(email.EmailProcessor);
      expect(processor.mail.tries.get("flaky@example.com")).toBe(3);
      expect(processor.failures).toEqual([
        "mail server refused flaky@example.com (try 1)",
        "mail server refused flaky@example.com (try 2)",
      ]);
      expect(processor.completed.sort()).toEqual([flaky.id, plain.id].sort());
      await until("the listener errors to be logged", async () => logger.errors.length >= 4);
      expect(
        logger.errors.filter((e) =>
          e.includes('onCompleted (@OnWorkerEvent("completed")) threw: listener boom'),
        ),
      ).toHaveLength(2);
      expect(
        logger.errors.filter((e) => e.includes("onFailed") && e.includes("async listener boom")),
      ).toHaveLength(2);
    } finally {
      await app.close();
    }
  });

  it("with autorun: false leaves the worker to the app until it calls this.worker.run()", async () => {
    const redis = sharedRedis();
    const prefix = uniquePrefix("nest");
    const { app } = await boot(lifecycle.LifecycleModule.forTest({ redis, prefix }));
    try {
      const queue = new Queue<{ n: number }>("manual", { redis, prefix });
      const job = await queue.add("double", { n: 21 });
      const processor = app.get(lifecycle.ManualProcessor);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(processor.worker.isRunning()).toBe(false);
      expect(await queue.getJobState(job.id)).toBe("waiting");

      const running = processor.worker.run();
      await until("the job to complete", async () => (await queue.getJobState(job.id)) === "completed");
      expect((await queue.getJob(job.id))?.returnvalue).toBe(42);
      await app.close(); // closes the worker, which ends run()
      await running;
      expect(processor.worker.isRunning()).toBe(false);
    } finally {
      await app.close();
    }
  });

  it("app.close() mid-job lets the running job finish and hands back the leased ones", async () => {
    const redis = sharedRedis();
    const prefix = uniquePrefix("nest");
    const { app } = await boot(lifecycle.LifecycleModule.forTest({ redis, prefix }));
    const queue = new Queue("slow", { redis, prefix });
    const jobs = await queue.addBulk([1, 2, 3].map((n) => ({ name: "slow", data: { n } })));
    const gate = app.get(lifecycle.Gate);
    await until("the first job to start", async () => gate.started.length === 1);
    // The worker leased all three (batchSize 3) but runs one at a time.
    expect(await queue.getActiveCount()).toBe(3);

    const closing = app.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await queue.getJobState(gate.started[0] as string)).toBe("active");
    gate.open();
    await closing;

    const states = await Promise.all(jobs.map((job) => queue.getJobState(job.id)));
    expect(gate.started).toEqual([jobs[0]?.id]);
    expect(states).toEqual(["completed", "waiting", "waiting"]);
    expect(await queue.getActiveCount()).toBe(0);
    expect((await queue.getWaiting()).map((job) => job.id).sort()).toEqual([jobs[1]?.id, jobs[2]?.id].sort());
  });
});

describe("nestWorkerHandler", () => {
  it("boots the app once per container and drains like workerHandler, within the invocation's deadline", async () => {
    const redis = sharedRedis();
    const prefix = uniquePrefix("nest");
    const queue = new Queue<{ ms: number }>("lambda-email", { redis, prefix });
    const invoke = recorder.invokes.length;
    const handler = api.nestWorkerHandler(lifecycle.LambdaModule.forTest({ redis, prefix }), "lambda-email", {
      jobTimeoutMs: 300,
      safetyMarginMs: 200,
      concurrency: 1,
      batchSize: 2,
      invoke: (await import("../../functions/aws/lambda-invoker.ts")).createLambdaInvoker({
        client: recorder.lambdaClient(),
      }),
    });
    try {
      await queue.addBulk([1, 2, 3].map(() => ({ name: "send", data: { ms: 10 } })));
      const started = performance.now();
      const first = await handler({ queue: "lambda-email" }, lambdaContext({ remainingMs: 5000 }));
      const firstMs = performance.now() - started;
      expect(first).toMatchObject({
        queue: "lambda-email",
        completed: 3,
        stoppedBecause: "empty",
        chained: false,
      });
      const app = await handler.app();
      const processor = app.get(lifecycle.LambdaEmailProcessor, { strict: false });
      expect(app.get(lifecycle.Tally, { strict: false }).completed).toHaveLength(3);
      expect(processor.worker.name).toBe("lambda-email");

      // A second invocation in the same container: same context, same worker; this one runs out of time.
      const worker = processor.worker;
      await queue.addBulk(Array.from({ length: 12 }, () => ({ name: "send", data: { ms: 150 } })));
      const second = await handler(
        { queue: "lambda-email", chain: 0 },
        lambdaContext({ remainingMs: 1200, functionName: "nest-email-worker" }),
      );
      expect(await handler.app()).toBe(app);
      expect(processor.worker).toBe(worker);
      expect(second.stoppedBecause).toBe("deadline");
      expect(second.completed).toBeGreaterThan(0);
      expect(second.completed).toBeLessThan(12);
      expect(second.chained).toBe(true);
      expect(recorder.invokes.slice(invoke)).toHaveLength(1);
      expect(await queue.getActiveCount()).toBe(0);
      expect(await queue.getWaitingCount()).toBe(12 - second.completed);
      const warm = performance.now();
      await handler({ queue: "lambda-email" }, lambdaContext({ remainingMs: 5000 }));
      console.info(
        `nestWorkerHandler: first invocation (boot + 3 jobs) ${Math.round(firstMs)} ms; ` +
          `a warm one on ${12 - second.completed} jobs ${Math.round(performance.now() - warm)} ms`,
      );
    } finally {
      await handler.close();
    }
  });

  it("says which processors exist when the queue has none, and boots again on the next invocation", async () => {
    const redis = sharedRedis();
    const prefix = uniquePrefix("nest");
    const handler = api.nestWorkerHandler(lifecycle.LambdaModule.forTest({ redis, prefix }), "nope");
    const context = lambdaContext({ remainingMs: 5000 });
    await expect(handler({ queue: "nope" }, context)).rejects.toThrow(
      'no @Processor("nope") in the application (processors found: "lambda-email")',
    );
    await expect(handler({ queue: "nope" }, context)).rejects.toThrow('no @Processor("nope")');
  });
});
