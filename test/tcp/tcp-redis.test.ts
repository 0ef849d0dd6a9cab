/**
 * Redis over TCP (issue 27, point 1), standalone: the same queues, workers, flows and events through
 * `createRedis({ url: "redis://…" })` on the test run's redis-server, with no REST server between —
 * nimbusq's allow-key-locking scripts adapted for plain Redis, NOSCRIPT after a flush, a dropped
 * connection ridden out, and real BullMQ reading what nimbusq wrote over TCP.
 */
import { execFile } from "node:child_process";
import { Queue as BullQueue } from "bullmq";
import { Redis as IORedis } from "ioredis";
import { afterAll, describe, expect, inject, it, vi } from "vitest";
import { createRedis, FlowProducer, Queue, QueueEvents, TcpRedis, Worker } from "../../core/index.ts";
import { withoutUpstashFlags } from "../../core/redis/tcp-redis.ts";
import { redisFromEnv } from "../../functions/config/redis-env.ts";
import { createHttpApp, httpOptionsFromEnv } from "../../functions/index.ts";
import { type WorkerEvent, workerHandler } from "../../functions/worker.ts";
import { freePort, startRedisServer } from "../../infra/redis-server.ts";
import { resolveOptions } from "../../nestjs/options.ts";
import { lambdaContext } from "../support/aws-events.ts";
import { sharedConnection, uniquePrefix } from "../support/stack.ts";

const url = `redis://${inject("redisHost")}:${inject("redisPort")}` as const;
const redis = createRedis({ url });
const direct = sharedConnection();
afterAll(async () => {
  await redis.close();
  direct.disconnect();
});

describe("createRedis with a redis:// URL", () => {
  it("gives a TCP client; a bad URL is refused naming what is expected", () => {
    expect(redis).toBeInstanceOf(TcpRedis);
    expect(redis.scriptFlags).toBe("redis");
    expect(createRedis({ url: "rediss://default:pw@eu1-example.upstash.io:6379" }).scriptFlags).toBe(
      "upstash",
    );
    expect(createRedis({ url: "redis://x.upstash.io:6379", scriptFlags: "redis" }).scriptFlags).toBe("redis");
    expect(() => new TcpRedis({ url: "https://example.com" })).toThrow(/redis:\/\/ or rediss:\/\//);
    expect(() => new TcpRedis({ url: "not a url" })).toThrow(/not a URL/);
  });

  it("takes Upstash's flag out of a shebang, keeping the others", () => {
    expect(withoutUpstashFlags("#!lua flags=allow-key-locking\nreturn 1")).toBe("return 1");
    expect(withoutUpstashFlags("#!lua flags=no-writes,allow-key-locking\nreturn 1")).toBe(
      "#!lua flags=no-writes\nreturn 1",
    );
    expect(withoutUpstashFlags("return 1")).toBe("return 1");
  });

  it("runs adds, a worker's drain, a flow and QueueEvents over TCP", async () => {
    const prefix = uniquePrefix("tcp");
    const queue = new Queue("mail", { redis, prefix });
    await queue.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: "send", data: { i } })));
    await new FlowProducer({ redis, prefix }).add({
      name: "parent",
      queueName: "mail",
      children: [{ name: "child", queueName: "mail", data: { i: 100 } }],
    });
    const events = new QueueEvents("mail", {
      redis,
      prefix,
      lastEventId: "0",
      poll: { minMs: 10, maxMs: 50 },
    });
    const completed: string[] = [];
    events.on("completed", ({ jobId }) => completed.push(jobId));
    const worker = new Worker("mail", async (job) => (job.data as { i?: number }).i ?? "parent", {
      redis,
      prefix,
      concurrency: 20,
      batchSize: 20,
    });
    let done = 0;
    for (let round = 0; round < 5 && done < 62; round++) done += (await worker.drain()).completed;
    expect(done).toBe(62);
    expect(await queue.getJobCounts("completed", "waiting", "active")).toEqual({
      completed: 62,
      waiting: 0,
      active: 0,
    });
    for (let i = 0; i < 200 && completed.length < 62; i++) await new Promise((r) => setTimeout(r, 25));
    expect(completed).toHaveLength(62);
    // BullMQ reads what nimbusq wrote over TCP.
    const bull = new BullQueue("mail", { connection: direct, prefix });
    expect(await bull.getJobCounts("completed")).toEqual({ completed: 62 });
    await bull.close();
    await events.close();
  });

  it("sends each script's source once, then EVALSHA with the adapted source's SHA", async () => {
    const server = await startRedisServer();
    const own = createRedis({ url: `redis://127.0.0.1:${server.port}` });
    const stats = new IORedis({ host: "127.0.0.1", port: server.port });
    const count = async (name: string) =>
      Number(
        new RegExp(`^cmdstat_${name}:calls=(\\d+)`, "m").exec(
          String(await stats.info("commandstats")),
        )?.[1] ?? 0,
      );
    try {
      const queue = new Queue("q", { redis: own, prefix: uniquePrefix("tcp") });
      await queue.add("a", {});
      expect(await count("eval")).toBe(1);
      for (let i = 0; i < 5; i++) await queue.add("b", {});
      expect({ eval: await count("eval"), evalsha: await count("evalsha") }).toEqual({ eval: 1, evalsha: 5 });
    } finally {
      stats.disconnect();
      await own.close();
      await server.stop();
    }
  });

  it("loads its scripts again after SCRIPT FLUSH, and rides out a dropped connection", async () => {
    const prefix = uniquePrefix("tcp");
    const queue = new Queue("q", { redis, prefix });
    await queue.add("a", {});
    await direct.script("FLUSH");
    await queue.add("b", {});
    await direct.client("KILL", "TYPE", "normal", "SKIPME", "yes");
    await queue.add("c", {});
    expect(await queue.getJobCounts("waiting")).toEqual({ waiting: 3 });
  });

  it("a server that is gone fails the call, and ioredis prints no unhandled error events", async () => {
    const gone = createRedis({ url: `redis://127.0.0.1:${await freePort()}`, connectTimeoutMs: 500 });
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await expect(gone.hgetall("k")).rejects.toThrow(/ECONNREFUSED|Connection is closed|retries/);
      expect(printed.mock.calls.map((call) => String(call[0]))).not.toContainEqual(
        expect.stringContaining("Unhandled error event"),
      );
    } finally {
      printed.mockRestore();
      await gone.close();
    }
  });

  it("refuses the REST form on plain Redis: the script form is what makes it run", async () => {
    const upstashForm = createRedis({ url, scriptFlags: "upstash" });
    const prefix = uniquePrefix("tcp");
    const queue = new Queue("q", { redis: upstashForm, prefix, retry: { windowMs: 0 } });
    await queue.add("a", {});
    const worker = new Worker("q", async () => 1, { redis: upstashForm, prefix, retry: { windowMs: 0 } });
    await expect(worker.drain()).rejects.toThrow(/allow-key-locking|flag/i);
    await upstashForm.close();
  });
});

describe("the NestJS module's options over TCP", () => {
  it("a redis:// url alone gives a TcpRedis (cluster: true for a cluster); a token beside it is refused", async () => {
    const resolved = resolveOptions({ url, prefix: uniquePrefix("tcp") }, undefined, "NimbusqModule.forRoot");
    expect(resolved.redis).toBeInstanceOf(TcpRedis);
    await new Queue("nest", { ...resolved }).add("a", {});
    expect(
      (resolveOptions({ url, cluster: true }, undefined, "forRoot").redis as TcpRedis).client.baseUrl,
    ).toBe(url);
    expect(() => resolveOptions({ url, token: "t" }, undefined, "forRoot")).toThrow(/token/);
    expect(() => resolveOptions({ cluster: true }, undefined, "forRoot")).toThrow(/cluster/);
    await (resolved.redis as TcpRedis).close();
  });
});

describe("the CLI over TCP", () => {
  it("NIMBUSQ_REDIS_URL: queues finds the queues with a SCAN walk, jobs lists them", async () => {
    const prefix = uniquePrefix("tcp");
    await new Queue("reports", { redis, prefix }).add("r", {});
    const env = { PATH: process.env.PATH ?? "", NIMBUSQ_REDIS_URL: url, NIMBUSQ_PREFIX: prefix };
    const cli = (args: string[]) =>
      new Promise<{ code: number; stdout: string }>((resolve) =>
        execFile(
          "node_modules/.bin/tsx",
          ["cli/main.ts", ...args],
          { env, timeout: 20_000 },
          (error, stdout) =>
            resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout }),
        ),
      );
    const listed = await cli(["queues", "--json"]);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { queues: { name: string }[] }).queues.map((q) => q.name)).toEqual([
      "reports",
    ]);
    const jobs = await cli(["jobs", "reports", "waiting", "--json"]);
    expect(jobs.code).toBe(0);
    expect(jobs.stdout).toContain('"name": "r"');
  });
});

describe("the functions over TCP, by configuration", () => {
  it("NIMBUSQ_REDIS_URL: the HTTP API adds over TCP and a worker invocation drains over TCP", async () => {
    const prefix = uniquePrefix("tcp");
    const env = { NIMBUSQ_REDIS_URL: url, NIMBUSQ_API_TOKENS: "t", NIMBUSQ_PREFIX: prefix };
    const options = httpOptionsFromEnv(env);
    expect(options.redis).toBeInstanceOf(TcpRedis);
    const app = createHttpApp(options);
    const answer = await app.request("/queues/mail/jobs", {
      method: "POST",
      headers: { authorization: "Bearer t", "content-type": "application/json" },
      body: JSON.stringify({ name: "send", data: { to: "a@example.com" } }),
    });
    expect(answer.status).toBe(202);
    const tcp = redisFromEnv(env);
    const handler = workerHandler({
      queue: "mail",
      processor: async () => "sent",
      redis: tcp,
      prefix,
      output: () => {},
    });
    await handler({} as WorkerEvent, lambdaContext({ remainingMs: 60_000 }));
    expect(await new Queue("mail", { redis, prefix }).getJobCounts("completed")).toEqual({ completed: 1 });
    await (tcp as TcpRedis).close();
    await (options.redis as TcpRedis).close();
  });

  it("refuses a NIMBUSQ_REDIS_URL that is not redis:// and a bad NIMBUSQ_REDIS_CLUSTER, naming them", () => {
    expect(() => redisFromEnv({ NIMBUSQ_REDIS_URL: "https://x.upstash.io" })).toThrow(
      /NIMBUSQ_REDIS_URL.*redis:\/\//,
    );
    expect(() => redisFromEnv({ NIMBUSQ_REDIS_URL: url, NIMBUSQ_REDIS_CLUSTER: "yes" })).toThrow(
      /NIMBUSQ_REDIS_CLUSTER/,
    );
    expect(redisFromEnv({ NIMBUSQ_REDIS_URL: url, NIMBUSQ_REDIS_CLUSTER: "true" })).toBeInstanceOf(TcpRedis);
  });
});
