/**
 * nimbusq on a Redis Cluster (issue 11, point 4): a local cluster of three masters (no replicas), the
 * REST server in cluster mode in front of it, and queues under `{hash-tag}` prefixes. Redis 7 stops a
 * script that touches a key of a second slot — after what it already wrote — so the whole lifecycle,
 * flows, dead letters, redrive, schedulers, maintenance and the sweeper running here without a single
 * script error, plus every key of a tag found in that tag's one slot on its one node, show that no
 * script touches two slots. Targets in another slot are refused when configured, writing nothing; a
 * foreign job's dead letter aimed at another slot is dropped, not found mid-ack.
 */
import type { Redis } from "@upstash/redis";
import { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRedis,
  FlowProducer,
  Queue,
  toRedisPort,
  UnrecoverableError,
  ValidationError,
  Worker,
} from "../../core/index.ts";
import type { AckEntry } from "../../core/job/ack-entry.ts";
import { ackPromoteAndLease } from "../../core/redis/generated/scripts.ts";
import {
  attentionKey,
  queueKeyPrefix,
  queueKeys,
  replayGuardKey,
  workerRegistryKey,
} from "../../core/redis/keys.ts";
import { runScript } from "../../core/redis/scripts.ts";
import { sweep } from "../../core/sweeper/sweep.ts";
import { compactEntry } from "../../core/worker/entry-wire.ts";
import { keySlot } from "../../infra/rest-server/key-slot.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";
import { type RedisCluster, redisServerInstalled, startRedisCluster } from "../support/redis-cluster.ts";

let cluster: RedisCluster;
let rest: RestServer;
let redis: Redis;
const run = Date.now().toString(36);

/** A hash tag `<label>-<run>-<n>` whose slot lives on cluster node `node`. */
function tagOn(node: number, label: string): string {
  for (let n = 0; ; n++) {
    const tag = `${label}-${run}-${n}`;
    if (cluster.nodeOf(keySlot(`{${tag}}`)) === node) return tag;
  }
}

/** Every key of the cluster, by the node that holds it. */
async function keysByNode(): Promise<string[][]> {
  return await Promise.all(cluster.connections.map((connection) => connection.keys("*")));
}

/** Drains until none of `pending` holds a job (a scheduler's next iteration may stay delayed). */
async function drainUntilIdle(
  worker: { drain(): Promise<unknown> },
  queue: Queue,
  pending: ("wait" | "delayed" | "active" | "prioritized")[] = ["wait", "delayed", "active", "prioritized"],
): Promise<void> {
  for (let round = 0; round < 200; round++) {
    await worker.drain();
    const counts = await queue.getJobCounts(...pending);
    if (Object.values(counts).every((count) => count === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  throw new Error("the queue did not run empty");
}

beforeAll(async () => {
  if (!redisServerInstalled()) return;
  cluster = await startRedisCluster(3);
  rest = await startRestServer({
    redis: cluster.nodes[0] as RedisCluster["nodes"][0],
    token: "c",
    cluster: true,
  });
  redis = createRedis({ url: rest.url, token: rest.token });
});

afterAll(async () => {
  await rest?.close();
  await cluster?.stop();
});

describe.skipIf(!redisServerInstalled())("on a Redis Cluster", () => {
  it("Redis stops a script at a key of a second slot, keeping what it wrote (hence: check first)", async () => {
    const first = `{${tagOn(1, "a")}}x`;
    let other = "";
    for (let n = 0; !other; n++) {
      const candidate = `{b-${run}-${n}}y`;
      if (cluster.nodeOf(keySlot(candidate)) === 1 && keySlot(candidate) !== keySlot(first))
        other = candidate;
    }
    const node = cluster.connections[1];
    expect(await node?.call("CLUSTER", "KEYSLOT", first)).toBe(keySlot(first));
    const script = "redis.call('SET', KEYS[1], '1') redis.call('SET', ARGV[1], '1') return 1";
    // Through the REST server in cluster mode, which gives every script a `#!lua` line 1: Redis 7 then
    // refuses the second slot's key — after the first write, which stays.
    await expect(redis.eval(script, [first], [other])).rejects.toThrow(
      /Script attempted to access keys that do not hash to the same slot/,
    );
    expect(await node?.get(first)).toBe("1");
    expect(await node?.exists(other)).toBe(0);
    // Redis 7.0 lets a script without a shebang do it (compatibility): why cluster mode adds one.
    expect(await node?.eval(script, 1, first, other)).toBe(1);
    expect(await node?.del(first)).toBe(1);
    expect(await node?.del(other)).toBe(1);
  });

  it("runs the lifecycle, retries, dead letters, redrive, flows and maintenance in one slot per tag", async () => {
    // Two tags served by two different nodes, run at once: each call is routed by its keys.
    const tags = [tagOn(0, "life"), tagOn(2, "life")];
    const errors: unknown[] = [];
    await Promise.all(tags.map((tag) => lifecycle(`{${tag}}`, errors)));
    expect(errors).toEqual([]);

    const byNode = await keysByNode();
    for (const [i, tag] of tags.entries()) {
      const slot = keySlot(`{${tag}}`);
      const node = cluster.nodeOf(slot);
      const keys = byNode[node]?.filter((key) => key.startsWith(`{${tag}}:`)) ?? [];
      expect(keys.length, `keys of tag ${i}`).toBeGreaterThan(20);
      // Redis's own slot of every key is the tag's; no other node holds a key of the tag.
      const slots = await Promise.all(
        keys.map((key) => cluster.connections[node]?.call("CLUSTER", "KEYSLOT", key)),
      );
      expect(new Set(slots)).toEqual(new Set([slot]));
      for (const [other, otherKeys] of byNode.entries()) {
        if (other !== node) expect(otherKeys.filter((key) => key.includes(tag))).toEqual([]);
      }
    }
    // Nothing outside the two tags was written (the first test's key is gone).
    expect(byNode.flat().filter((key) => !tags.some((tag) => key.startsWith(`{${tag}}:`)))).toEqual([]);
  });

  it("refuses targets in another slot when configured or added, writing nothing", async () => {
    const before = (await keysByNode()).flat().sort();
    const a = `{${tagOn(0, "ref")}}`;
    const refused = (make: () => unknown, field: string) => {
      let caught: unknown;
      try {
        make();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ValidationError);
      expect((caught as ValidationError).field).toBe(field);
      expect((caught as Error).message).toMatch(/hash tag \{ref-[^}]+\}.*Redis Cluster hash slot/);
    };
    const noop = async () => {};
    refused(
      () => new Worker("q", noop, { redis, prefix: a, deadLetter: { queue: "d", prefix: "{zz}" } }),
      "deadLetter.prefix",
    );
    refused(
      () => new Worker("q", noop, { redis, prefix: a, deadLetter: { queue: "d", prefix: "bull" } }),
      "deadLetter.prefix",
    );
    // An untagged source already spans slots: nothing is refused (fine on a non-cluster Redis).
    expect(
      () => new Worker("q", noop, { redis, prefix: "bull", deadLetter: { queue: "d", prefix: a } }),
    ).not.toThrow();
    expect(
      () => new Worker("q", noop, { redis, prefix: a, deadLetter: { queue: "d", prefix: `${a}x` } }),
    ).not.toThrow();

    const queue = new Queue("q", { redis, prefix: a });
    await expect(queue.add("j", {}, { deadLetter: { queue: "d", prefix: "{zz}" } })).rejects.toMatchObject({
      field: "opts.deadLetter.prefix",
    });
    await expect(queue.add("j", {}, { parent: { id: "1", queue: "{zz}:parents" } })).rejects.toMatchObject({
      field: "opts.parent.queue",
    });
    // A parent link binds both ways: an untagged child of a tagged parent is refused too.
    await expect(
      new Queue("q", { redis, prefix: "bull" }).add("j", {}, { parent: { id: "1", queue: `${a}:parents` } }),
    ).rejects.toMatchObject({ field: "opts.parent.queue" });
    const flow = new FlowProducer({ redis, prefix: a });
    await expect(
      flow.add({
        name: "p",
        queueName: "parents",
        children: [
          { name: "ok", queueName: "c" },
          { name: "far", queueName: "c", prefix: "{zz}" },
        ],
      }),
    ).rejects.toMatchObject({ field: "children[1].prefix" });
    expect((await keysByNode()).flat().sort()).toEqual(before);
  });

  it("drops a foreign job's dead letter aimed at another slot, in TypeScript and in the script", async () => {
    const tag = tagOn(1, "foreign");
    const prefix = `{${tag}}`;
    // BullMQ, the foreign producer, on the cluster through ioredis: it stores any option it is given.
    const connection = new Cluster([{ host: "127.0.0.1", port: cluster.nodes[0]?.port as number }], {
      redisOptions: { maxRetriesPerRequest: null },
    });
    const bull = new BullQueue("q", { connection, prefix });
    const foreign = await bull.add("f", { n: 1 }, {
      deadLetter: { queue: "dlq", prefix: "{elsewhere}" },
    } as never);
    const worker = new Worker(
      "q",
      async () => {
        throw new UnrecoverableError("no");
      },
      { redis, prefix },
    );
    const errors: unknown[] = [];
    worker.on("error", (error) => errors.push(error));
    expect(await worker.drain()).toMatchObject({ failed: 1 });
    expect(errors).toEqual([]);
    expect(await new Queue("q", { redis, prefix }).getJobState(foreign.id as string)).toBe("failed");

    // The script's own guard, for a caller that skipped core/dead-letter/dead-letter.ts: lease a job, then ack it
    // as failed with a dead letter in another slot. Without the guard Redis would stop this ack after
    // the job left active; with it the job is failed and no dead letter is written anywhere.
    const port = toRedisPort(redis);
    const queue = new Queue("raw", { redis, prefix });
    const job = await queue.add("r", {});
    const keys = {
      ...queueKeys(prefix, "raw"),
      replayGuard: "",
      attention: attentionKey(prefix),
      workers: workerRegistryKey(prefix, "raw"),
    };
    const call = (token: string, count: number, jobs: ReturnType<typeof compactEntry>[]) =>
      runScript(
        port,
        ackPromoteAndLease,
        { ...keys, replayGuard: replayGuardKey(prefix, "raw", `${token}-${count}`) },
        {
          prefix: queueKeyPrefix(prefix, "raw"),
          leaseToken: token,
          now: Date.now(),
          leaseMs: 30_000,
          count,
          peek: 0,
          candidates: "",
          limiterMax: 0,
          limiterDuration: 0,
          groupConcurrency: 0,
          groupLimitMax: 0,
          groupLimitDuration: 0,
          workerName: "",
          guardTtl: 60_000,
          maxLenEvents: 10_000,
          events: 2,
          prunes: "",
          unregister: "",
          jobs,
        },
      );
    await call("t1", 1, []);
    const entry: AckEntry = {
      id: job.id as string,
      token: "t1",
      outcome: "failed",
      value: "no",
      stacktrace: "[]",
      attemptsMade: 1,
      due: 0,
      priority: 0,
      lifo: "",
      keepCount: -1,
      keepAge: 0,
      keepLimit: 0,
      attempts: 1,
      parentKey: "",
      parentPrefix: "",
      parentPolicy: "",
      dedupId: "",
      deferred: "",
      deadLetter: "{elsewhere}:dlq:",
      deadLetterId: "dl:raw:1",
      deadLetterName: "r",
      deadLetterData: "{}",
      deadLetterOpts: "{}",
    };
    const reply = (await call("t2", 0, [compactEntry(entry)])) as unknown[];
    expect(reply[5]).toBe(1);
    expect(await queue.getJobState(job.id as string)).toBe("failed");
    expect((await keysByNode()).flat().filter((key) => key.includes("elsewhere"))).toEqual([]);
    await bull.close();
    connection.disconnect();
  });

  it("serves a real BullMQ worker on the same cluster", async () => {
    const prefix = `{${tagOn(2, "bull")}}`;
    const queue = new Queue("mixed", { redis, prefix });
    await queue.addBulk([1, 2, 3].map((n) => ({ name: "n", data: { n } })));
    const connection = new Cluster([{ host: "127.0.0.1", port: cluster.nodes[1]?.port as number }], {
      redisOptions: { maxRetriesPerRequest: null },
    });
    const worker = new BullWorker("mixed", async (job) => (job.data as { n: number }).n * 2, {
      connection,
      prefix,
    });
    await new Promise<void>((resolve) => {
      let count = 0;
      worker.on("completed", () => {
        count += 1;
        if (count === 3) resolve();
      });
    });
    await worker.close();
    connection.disconnect();
    const completed = await queue.getCompleted();
    expect(completed.map((job) => job.returnvalue).sort()).toEqual([2, 4, 6]);
  });
});

/** Everything a queue does, under `prefix`; script errors land in `errors`. */
async function lifecycle(prefix: string, errors: unknown[]): Promise<void> {
  const queue = new Queue("email", { redis, prefix });
  const runs = new Map<string, number>();
  let redriven = false;
  await queue.addBulk([
    { name: "ok", data: { n: 1 } },
    { name: "ok", data: { n: 2 }, opts: { priority: 3 } },
    { name: "later", data: {}, opts: { delay: 20 } },
    { name: "flaky", data: {}, opts: { attempts: 3, backoff: { type: "fixed", delay: 10 } } },
    { name: "doomed", data: {}, opts: { attempts: 2, deadLetter: { queue: "email-dlq" } } },
    { name: "fatal", data: {}, opts: { removeOnComplete: true } },
  ]);
  const worker = new Worker(
    "email",
    async (job) => {
      const n = (runs.get(job.id as string) ?? 0) + 1;
      runs.set(job.id as string, n);
      if (job.name === "flaky" && n < 3) throw new Error("flaky");
      if (!redriven && job.name === "doomed") throw new Error("doomed");
      if (!redriven && job.name === "fatal") throw new UnrecoverableError("fatal");
      await job.updateProgress(50);
      await job.log("ran");
      return { n };
    },
    { redis, prefix, deadLetter: { queue: "email-dlq" } },
  );
  worker.on("error", (error) => errors.push(error));
  await drainUntilIdle(worker, queue);
  expect(await queue.getJobCounts("completed", "failed")).toEqual({ completed: 4, failed: 2 });
  const dlq = new Queue("email-dlq", { redis, prefix });
  expect(await dlq.getJobCounts("wait")).toEqual({ wait: 2 });

  redriven = true;
  expect((await queue.redrive({ from: "email-dlq" })).count).toBe(2);
  await drainUntilIdle(worker, queue);
  expect(await queue.getJobCounts("completed", "failed")).toEqual({ completed: 5, failed: 2 });

  const flow = new FlowProducer({ redis, prefix });
  const tree = await flow.add({
    name: "report",
    queueName: "reports",
    children: [
      { name: "part", queueName: "parts", data: { n: 2 } },
      { name: "part", queueName: "parts", data: { n: 0 }, opts: { ignoreDependencyOnFailure: true } },
    ],
  });
  const parts = new Worker(
    "parts",
    async (job) => {
      if ((job.data as { n: number }).n === 0) throw new UnrecoverableError("zero");
      return (job.data as { n: number }).n * 10;
    },
    { redis, prefix },
  );
  const reports = new Worker("reports", async () => "done", { redis, prefix });
  for (const one of [parts, reports]) one.on("error", (error) => errors.push(error));
  await drainUntilIdle(parts, new Queue("parts", { redis, prefix }));
  await drainUntilIdle(reports, new Queue("reports", { redis, prefix }));
  expect(await tree.job.getState()).toBe("completed");

  // Maintenance and the sweeper, each a script of its own.
  await queue.pause();
  await queue.resume();
  await queue.upsertJobScheduler("tick", { every: 60_000 }, { name: "tick" });
  await drainUntilIdle(worker, queue, ["wait", "active", "prioritized"]);
  await queue.removeJobScheduler("tick");
  const [completed] = await queue.getCompleted(0, 0);
  await completed?.remove();
  await queue.retryJobs({ state: "failed" });
  await drainUntilIdle(worker, queue);
  await queue.clean(0, 100, "completed");
  const swept = await sweep({
    port: toRedisPort(redis),
    prefix,
    queues: ["email", "email-dlq", "parts", "reports"],
    token: "sweeper",
    lockTtlMs: 5_000,
    now: Date.now(),
    stalledInterval: 1,
    maxStalledCount: 1,
    promoteLimit: 100,
    eventBatch: 10,
    recheckMs: 60_000,
  });
  expect(swept.locked).toBe(false);
}
