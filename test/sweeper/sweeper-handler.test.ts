import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue, toRedisPort, Worker } from "../../core/index.ts";
import { trackWorkerInvocation } from "../../core/worker/worker-registry.ts";
import { createEventPublisher } from "../../functions/aws/event-publisher.ts";
import { createLambdaInvoker } from "../../functions/aws/lambda-invoker.ts";
import { sweeperHandler } from "../../functions/sweeper.ts";
import { lambdaContext, scheduledEvent } from "../support/aws-events.ts";
import { type AwsRecorder, startAwsRecorder } from "../support/aws-recorder.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let stack: PrivateStack;
let recorder: AwsRecorder;
beforeAll(async () => {
  stack = await startPrivateStack();
  recorder = await startAwsRecorder();
});
afterAll(async () => {
  await recorder.close();
  await stack.stop();
});

const context = (remainingMs = 60_000) => lambdaContext({ remainingMs });

function sweeper(prefix: string, extra: Partial<Parameters<typeof sweeperHandler>[0]> = {}) {
  return sweeperHandler({
    queues: [{ name: "email", workerFunction: "email-worker", batchSize: 10, maxWorkers: 4 }],
    redis: stack.redis,
    prefix,
    mode: "once",
    releaseLock: true,
    invoke: createLambdaInvoker({ client: recorder.lambdaClient() }),
    publish: createEventPublisher({ client: recorder.eventBridgeClient() }),
    ...extra,
  });
}

describe("sweeperHandler", () => {
  it("invokes ceil(waiting / batchSize) workers, capped, minus those running", async () => {
    const prefix = uniquePrefix();
    await new Queue("email", { redis: stack.redis, prefix }).addBulk(
      Array.from({ length: 25 }, (_, n) => ({ name: "send", data: { n } })),
    );
    const before = recorder.invokes.length;
    const result = await sweeper(prefix)(scheduledEvent(), context());
    expect(result.invoked).toEqual({ email: 3 });
    expect(recorder.invokes.slice(before)).toEqual(
      Array.from({ length: 3 }, () => ({
        functionName: "email-worker",
        invocationType: "Event",
        payload: { queue: "email", reason: "sweeper" },
      })),
    );
    await stack.direct.zadd(
      `${prefix}:email:nq:workers`,
      Date.now() + 60_000,
      "running-1",
      Date.now() + 60_000,
      "running-2",
    );
    expect((await sweeper(prefix)(scheduledEvent(), context())).invoked).toEqual({ email: 1 });
    await new Queue("email", { redis: stack.redis, prefix }).addBulk(
      Array.from({ length: 100 }, (_, n) => ({ name: "send", data: { n } })),
    );
    expect((await sweeper(prefix)(scheduledEvent(), context())).invoked).toEqual({ email: 2 });
    await new Queue("email", { redis: stack.redis, prefix }).pause();
    expect((await sweeper(prefix)(scheduledEvent(), context())).invoked).toEqual({});
  });

  it("holds the lock until shortly before the next tick, so a duplicated tick does nothing", async () => {
    const prefix = uniquePrefix();
    const tick = sweeperHandler({ queues: ["email"], redis: stack.redis, prefix, mode: "once" });
    expect((await tick(scheduledEvent(), context())).locked).toBe(false);
    const ttl = await stack.direct.pttl(`${prefix}:nq:sweeper:lock`);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThan(60_000);
    // A job added since: the duplicated tick has something to sweep, and finds the lock held.
    await new Queue("email", { redis: stack.redis, prefix }).add("send", {});
    expect((await tick(scheduledEvent(), context())).locked).toBe(true);
  });

  it("does nothing while another sweeper holds the lock", async () => {
    const prefix = uniquePrefix();
    await stack.direct.set(`${prefix}:nq:sweeper:lock`, "other-invocation", "PX", 10_000);
    await new Queue("email", { redis: stack.redis, prefix }).add("send", {});
    const result = await sweeper(prefix)(scheduledEvent(), context());
    expect(result).toMatchObject({ locked: true, passes: 0, invoked: {} });
    expect(await stack.direct.get(`${prefix}:nq:sweeper:lock`)).toBe("other-invocation");
  });

  it("forwards each new event once, 10 entries a call, and retries from the first failure", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("email", { redis: stack.redis, prefix });
    const sweep = sweeper(prefix, { queues: ["email"], eventBus: "app-bus" });
    await sweep(scheduledEvent(), context());
    const calls = recorder.putEventsCalls.length;
    await queue.addBulk(Array.from({ length: 7 }, (_, n) => ({ name: "send", data: { n } })));
    const first = await sweep(scheduledEvent(), context());
    expect(first.forwarded).toBe(14);
    const sent = recorder.putEventsCalls.slice(calls);
    expect(sent.map((entries) => entries.length)).toEqual([10, 4]);
    const entry = sent[0]?.[0];
    expect(entry).toMatchObject({
      EventBusName: "app-bus",
      Source: "nimbusq",
      DetailType: "nimbusq.job.added",
    });
    expect(JSON.parse(entry?.Detail as string)).toMatchObject({ queue: "email", jobId: "1", name: "send" });
    expect((await sweep(scheduledEvent(), context())).forwarded).toBe(0);

    await queue.add("urgent", {});
    recorder.failEntry = (e) => e.DetailType === "nimbusq.job.waiting";
    const failing = await sweep(scheduledEvent(), context());
    expect(failing.forwarded).toBe(1);
    recorder.failEntry = () => false;
    const retried = recorder.putEventsCalls.length;
    const again = await sweep(scheduledEvent(), context());
    expect(again.forwarded).toBe(1);
    expect(
      recorder.putEventsCalls
        .slice(retried)
        .flat()
        .map((e) => e.DetailType),
    ).toEqual(["nimbusq.job.waiting"]);
  });

  it("promotes due delayed jobs, recovers lapsed leases, and loops until a delayed job is due", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("email", { redis: stack.redis, prefix });
    await queue.add("later", {}, { delay: 700 });
    const before = recorder.invokes.length;
    const started = Date.now();
    const result = await sweeper(prefix, { mode: "loop", tickMs: 3000, marginMs: 500 })(
      scheduledEvent(),
      context(3000),
    );
    expect(result.promoted).toBe(1);
    // Two passes: one before the job is due, one at its due time (a third when a loaded machine wakes
    // the second just before the due millisecond; it promotes nothing more).
    expect(result.passes).toBeGreaterThanOrEqual(2);
    expect(result.passes).toBeLessThanOrEqual(3);
    expect(recorder.invokes.length - before).toBe(1);
    expect(Date.now() - started).toBeLessThan(2000);
    const worker = new Worker("email", async () => "ok", {
      redis: stack.redis,
      prefix,
      stalledInterval: 100,
    });
    expect((await worker.drain()).completed).toBe(1);
  });

  it("an idle tick costs one billed command for the whole deployment, with 1 and with 20 queues", async () => {
    const measure = async (names: string[]) => {
      const prefix = uniquePrefix();
      // The queues have done work: a completed job each, kept; a worker invocation registered and gone.
      for (const name of names) {
        await new Queue(name, { redis: stack.redis, prefix }).add("done", {});
        await new Worker(name, async () => "ok", { redis: stack.redis, prefix }).drain();
        await trackWorkerInvocation(toRedisPort(stack.redis), prefix, name, "gone", Date.now() - 1000);
      }
      // As deployed: loop mode, events forwarded, metrics every 5th pass.
      const tick = sweeperHandler({
        queues: names.map((name) => ({ name, workerFunction: `${name}-worker` })),
        redis: stack.redis,
        prefix,
        eventBus: "bus",
        publish: async () => ({ failed: [] }),
        metricsEveryPasses: 5,
      });
      // A container's first ten ticks: its first pass sweeps every queue, its first report reads them.
      for (let n = 0; n < 10; n++) await tick(scheduledEvent(), context());
      stack.rest.resetStats();
      for (let n = 0; n < 10; n++) expect((await tick(scheduledEvent(), context())).passes).toBe(1);
      const { billed, byCommand } = stack.rest.stats();
      expect(byCommand).toEqual({ zrange: 10 });
      return billed / 10;
    };
    expect(await measure(["solo"])).toBe(1);
    expect(await measure(Array.from({ length: 20 }, (_, i) => `idle-${i}`))).toBe(1);
  });
});
