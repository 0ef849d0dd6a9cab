/**
 * A job that fails for good is copied to its dead-letter queue by the ack that fails it: a normal
 * waiting job of that queue carrying the job (name, data, opts, id, queue) and why it failed. Retried
 * failures make none, `removeOnFail: true` originals still make one, a replayed ack makes one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeadLetterData, Queue, UnrecoverableError, Worker } from "../../core/index.ts";
import {
  otherPrefix,
  overRest,
  type PrivateStack,
  startPrivateStack,
  uniquePrefix,
} from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

function failing(prefix: string, options: Partial<ConstructorParameters<typeof Worker>[2]> = {}) {
  const worker = new Worker(
    "q",
    async (job) => {
      throw new Error(`boom ${job.id}`);
    },
    { redis: stack.redis, prefix, batchSize: 50, ...options },
  );
  worker.on("error", () => {});
  return worker;
}

async function events(key: string): Promise<Record<string, string>[]> {
  const entries = await stack.direct.xrange(key, "-", "+");
  return entries.map(([, fields]) => {
    const event: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) event[fields[i] as string] = fields[i + 1] as string;
    return event;
  });
}

async function letterOf(prefix: string, queue: string, id: string) {
  const hash = await stack.direct.hgetall(`${prefix}:${queue}:${id}`);
  return { hash, data: JSON.parse(hash.data ?? "null") as DeadLetterData };
}

describe("dead letters", () => {
  it("carry the job and its failure, as a waiting job of the dead-letter queue", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    const opts = { attempts: 2, deadLetter: { queue: "dlq" }, keepLogs: 5, stackTraceLimit: 3 };
    const job = await queue.add("send", { to: "a@example.com", n: [1, 2] }, opts);
    // The first attempt is retried at once (no backoff) within the same drain; the second fails for good.
    const summary = await failing(prefix).drain();
    expect({ retried: summary.retried, failed: summary.failed }).toEqual({ retried: 1, failed: 1 });

    const original = await stack.direct.hgetall(`${prefix}:q:${job.id}`);
    expect(await stack.direct.zrange(`${prefix}:q:failed`, 0, -1)).toEqual([job.id]);
    expect(await stack.direct.lrange(`${prefix}:dlq:wait`, 0, -1)).toEqual([`dl:q:${job.id}`]);
    const { hash, data } = await letterOf(prefix, "dlq", `dl:q:${job.id}`);
    expect(hash).toEqual({
      name: "send",
      data: hash.data,
      opts: '{"attempts":0}',
      timestamp: original.finishedOn,
      delay: "0",
      priority: "0",
    });
    expect(data).toEqual({
      job: {
        id: job.id,
        name: "send",
        queue: "q",
        prefix,
        timestamp: job.timestamp,
        attemptsStarted: 2,
        opts: { attempts: 2, deadLetter: { queue: "dlq" }, keepLogs: 5, stackTraceLimit: 3 },
        data: { to: "a@example.com", n: [1, 2] },
      },
      failedReason: `boom ${job.id}`,
      stacktrace: JSON.parse(original.stacktrace ?? "[]"),
      attemptsMade: 2,
    });
    expect(data.stacktrace).toHaveLength(2);
    expect(await stack.direct.zrange(`${prefix}:dlq:marker`, 0, -1, "WITHSCORES")).toEqual(["0", "0"]);
    expect(await events(`${prefix}:dlq:events`)).toEqual([
      { event: "added", jobId: `dl:q:${job.id}`, name: "send" },
      { event: "waiting", jobId: `dl:q:${job.id}` },
    ]);
    // The source queue's stream is as without a dead letter.
    const names = (await events(`${prefix}:q:events`)).map((e) => e.event);
    expect(names.filter((n) => n === "failed")).toHaveLength(1);
    // A nimbusq reader sees a normal job.
    const read = await new Queue("dlq", { redis: stack.redis, prefix }).getJob(`dl:q:${job.id}`);
    expect(await read?.getState()).toBe("waiting");
    expect(read?.opts).toEqual({ attempts: 0 });
  });

  it("keep any JSON data as stored, even when the processor changed job.data in memory", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    const values = ["just a string", [1, "two"], null, 42, { failedReason: "mine", job: "mine too" }];
    const added = await queue.addBulk(
      values.map((data) => ({ name: "v", data, opts: { deadLetter: { queue: "dlq" } } })),
    );
    const worker = new Worker(
      "q",
      async (job) => {
        if (job.data && typeof job.data === "object") (job.data as Record<string, unknown>).changed = true;
        throw new Error("no");
      },
      { redis: stack.redis, prefix, batchSize: 10 },
    );
    await worker.drain();
    for (const [i, job] of added.entries()) {
      const { data } = await letterOf(prefix, "dlq", `dl:q:${job.id}`);
      expect(data.job.data).toEqual(values[i]);
      expect(data.failedReason).toBe("no");
    }
    // And back: a redriven job's data is the original's, whatever its JSON type.
    const redriven = await queue.redrive({ from: "dlq" });
    expect(redriven.count).toBe(values.length);
    for (const [i, { id }] of redriven.jobs.entries()) {
      expect(JSON.parse((await stack.direct.hget(`${prefix}:q:${id}`, "data")) ?? "")).toEqual(values[i]);
    }
  });

  it("come from the Worker's option, a job's own option winning; none for retried failures", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    const [plain, own, retried, unrecoverable] = await queue.addBulk([
      { name: "plain", data: {} },
      { name: "own", data: {}, opts: { deadLetter: { queue: "own-dlq" } } },
      { name: "retried", data: {}, opts: { attempts: 3, backoff: 60_000 } },
      { name: "unrecoverable", data: {}, opts: { attempts: 3 } },
    ]);
    const worker = new Worker(
      "q",
      async (job) => {
        throw job.name === "unrecoverable" ? new UnrecoverableError("stop") : new Error("again");
      },
      { redis: stack.redis, prefix, deadLetter: { queue: "dlq" } },
    );
    worker.on("error", () => {});
    const summary = await worker.drain();
    expect({ failed: summary.failed, retried: summary.retried }).toEqual({ failed: 3, retried: 1 });
    expect((await stack.direct.lrange(`${prefix}:dlq:wait`, 0, -1)).sort()).toEqual(
      [`dl:q:${plain?.id}`, `dl:q:${unrecoverable?.id}`].sort(),
    );
    expect(await stack.direct.lrange(`${prefix}:own-dlq:wait`, 0, -1)).toEqual([`dl:q:${own?.id}`]);
    expect(await stack.direct.exists(`${prefix}:dlq:dl:q:${retried?.id}`)).toBe(0);
    expect(await stack.direct.zrange(`${prefix}:q:delayed`, 0, -1)).toEqual([retried?.id]);
  });

  it("are made for removeOnFail: true originals, which are gone", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    const job = await queue.add("gone", { keep: "me" }, { removeOnFail: true, deadLetter: { queue: "dlq" } });
    await failing(prefix).drain();
    expect(await stack.direct.exists(`${prefix}:q:${job.id}`)).toBe(0);
    expect(await stack.direct.zcard(`${prefix}:q:failed`)).toBe(0);
    const { data } = await letterOf(prefix, "dlq", `dl:q:${job.id}`);
    expect(data.job).toMatchObject({ id: job.id, name: "gone", data: { keep: "me" } });
    expect(data.job.opts).toMatchObject({ removeOnFail: true });
  });

  it("get ids valid for BullMQ whatever the job id, and name another prefix when the queue has one", async () => {
    const prefix = uniquePrefix();
    const other = otherPrefix(prefix);
    const queue = new Queue("q", { redis: stack.redis, prefix });
    await queue.addBulk([
      { name: "colons", data: {}, opts: { jobId: "a:b%c:d", deadLetter: { queue: "dlq" } } },
      { name: "far", data: {}, opts: { jobId: "far", deadLetter: { queue: "dlq", prefix: other } } },
    ]);
    await failing(prefix).drain();
    expect(await stack.direct.lrange(`${prefix}:dlq:wait`, 0, -1)).toEqual(["dl:q:a%3Ab%25c%3Ad"]);
    const far = `dl:${prefix}%3Aq:far`;
    expect(await stack.direct.lrange(`${other}:dlq:wait`, 0, -1)).toEqual([far]);
    expect((await letterOf(other, "dlq", far)).data.job).toMatchObject({ id: "far", queue: "q", prefix });
  });

  it("are never doubled: a dead letter that exists is left alone (duplicated)", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    const job = await queue.add("twice", { n: 1 }, { deadLetter: { queue: "dlq" } });
    const worker = failing(prefix);
    await worker.drain();
    const first = await stack.direct.hgetall(`${prefix}:dlq:dl:q:${job.id}`);
    await (await queue.getJob(job.id))?.retry("failed");
    await worker.drain();
    expect(await stack.direct.zrange(`${prefix}:q:failed`, 0, -1)).toEqual([job.id]);
    expect(await stack.direct.lrange(`${prefix}:dlq:wait`, 0, -1)).toEqual([`dl:q:${job.id}`]);
    expect(await stack.direct.hgetall(`${prefix}:dlq:dl:q:${job.id}`)).toEqual(first);
    expect((await events(`${prefix}:dlq:events`)).map((e) => e.event)).toEqual([
      "added",
      "waiting",
      "duplicated",
    ]);
  });

  it("a replayed ack (its answer lost) makes one dead letter", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis: stack.redis, prefix });
    const jobs = await queue.addBulk(
      Array.from({ length: 5 }, (_, n) => ({
        name: "r",
        data: { n },
        opts: { deadLetter: { queue: "dlq" } },
      })),
    );
    const worker = failing(prefix);
    await queue.add("warm", {}, { jobId: "warm" });
    // Lease (1st EVALSHA) passes, the ack (2nd) runs and its answer is dropped; the retry replays it.
    const firedBefore = stack.faultsFired() ?? 0;
    stack.setFault({ kind: "drop-after", command: "evalsha", every: 2, times: 1 });
    const summary = await worker.drain();
    stack.setFault(null);
    // Over TCP the proxy counts what it did: the answer was dropped.
    expect((stack.faultsFired() ?? 1) - firedBefore).toBe(1);
    expect(summary.failed).toBe(6);
    expect(summary.lostLeases).toBe(0);
    const wait = await stack.direct.lrange(`${prefix}:dlq:wait`, 0, -1);
    expect(wait.sort()).toEqual(jobs.map((j) => `dl:q:${j.id}`).sort());
    const dlqEvents = (await events(`${prefix}:dlq:events`)).map((e) => e.event);
    expect(dlqEvents.filter((e) => e === "added")).toHaveLength(5);
    expect(dlqEvents.filter((e) => e === "duplicated")).toHaveLength(0);
  });

  it("a Worker refuses its own queue as dead-letter queue, and bad options", () => {
    const make = (deadLetter: unknown) =>
      new Worker("q", async () => 1, { redis: stack.redis, deadLetter: deadLetter as never });
    expect(() => make({ queue: "q" })).toThrow(/deadLetter.queue must be another queue/);
    expect(() => make({ queue: "a:b" })).toThrow(/deadLetter.queue/);
    expect(() => make({ queue: "dlq", extra: 1 })).toThrow(/deadLetter.extra/);
    expect(() => make({ queue: "q", prefix: "other" })).not.toThrow();
  });

  it("a job's deadLetter option is checked when added", async () => {
    const queue = new Queue("q", { redis: stack.redis, prefix: uniquePrefix() });
    await expect(queue.add("x", {}, { deadLetter: { queue: "" } })).rejects.toThrow(/opts.deadLetter.queue/);
    await expect(queue.add("x", {}, { deadLetter: "dlq" as never })).rejects.toThrow(/opts.deadLetter/);
    await expect(queue.add("x", {}, { deadLetter: { queue: "dlq", prefix: 1 as never } })).rejects.toThrow(
      /opts.deadLetter.prefix/,
    );
  });
});

// Billed commands are the REST server's count.
describe.skipIf(!overRest())("cost", () => {
  it("of a final failure with a dead letter, against one without (billed commands)", async () => {
    const measure = async (opts: object) => {
      const prefix = uniquePrefix();
      const queue = new Queue("q", { redis: stack.redis, prefix });
      // All 50 acks in one call whatever the machine's load, so both sides pay the same calls.
      const worker = failing(prefix, { ack: { groupSize: 50, waitMs: 5000 } });
      await queue.add("warm", {});
      await worker.drain();
      await queue.addBulk(Array.from({ length: 50 }, (_, n) => ({ name: "n", data: { n }, opts })));
      stack.rest.resetStats();
      await worker.drain();
      return stack.rest.stats();
    };
    // A loaded machine can still split a drain's acks over more calls; compare runs of as many calls.
    let without = await measure({});
    let withLetter = await measure({ deadLetter: { queue: "dlq" } });
    for (let i = 0; i < 5 && withLetter.requests !== without.requests; i++) {
      without = await measure({});
      withLetter = await measure({ deadLetter: { queue: "dlq" } });
    }
    expect(withLetter.requests).toBe(without.requests);
    const single = async (opts: object) => {
      const prefix = uniquePrefix();
      const queue = new Queue("q", { redis: stack.redis, prefix });
      const worker = failing(prefix);
      await queue.add("warm", {});
      await worker.drain();
      await queue.add("one", { n: 1 }, opts);
      stack.rest.resetStats();
      await worker.drain();
      return stack.rest.stats().billed;
    };
    const oneWithout = await single({});
    const oneWith = await single({ deadLetter: { queue: "dlq" } });
    console.log(
      `dead letter cost: 50 jobs ${without.billed} → ${withLetter.billed} billed (+${(withLetter.billed - without.billed) / 50}/job); one job ${oneWithout} → ${oneWith}`,
    );
    // The dead letter's add (hash, added, LPUSH, waiting, marker, EXISTS) and its queue's note in the
    // sweeper's attention index.
    expect((withLetter.billed - without.billed) / 50).toBe(7);
    expect(oneWith - oneWithout).toBe(7);
  });
});
