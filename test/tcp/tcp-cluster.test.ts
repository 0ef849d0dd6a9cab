/**
 * Redis Cluster over TCP (issue 27, point 1): a local cluster of three masters (real redis-servers in
 * cluster mode, joined by redis-cli), queues under hash-tagged prefixes spread over the masters, and
 * createRedis({ url, cluster: true }) finding each queue's node (MOVED), loading scripts on each node
 * as it first meets them (NOSCRIPT per node) and running adds, a worker's drain and a flow.
 */
import { Redis as IORedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis, createSweeper, FlowProducer, Queue, type TcpRedis, Worker } from "../../core/index.ts";
import type { RedisServer } from "../../infra/redis-server.ts";
import { type RedisCluster, startRedisCluster } from "../support/redis-cluster.ts";

let cluster: RedisCluster;
let nodes: RedisServer[] = [];
let redis: TcpRedis;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  nodes = cluster.nodes;
  redis = createRedis({ url: `redis://${nodes[0]?.host}:${nodes[0]?.port}`, cluster: true });
}, 60_000);

afterAll(async () => {
  await redis?.close();
  await cluster?.stop();
});

describe("createRedis({ url, cluster: true })", () => {
  it("runs queues under hash-tagged prefixes on different masters: adds, a drain, a flow", async () => {
    const prefixes = ["{tenant-a}", "{tenant-b}", "{tenant-c}", "{tenant-d}"];
    for (const prefix of prefixes) {
      const queue = new Queue("mail", { redis, prefix });
      await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: "send", data: { i } })));
      await new FlowProducer({ redis, prefix }).add({
        name: "report",
        queueName: "mail",
        children: [{ name: "part", queueName: "mail", data: { i: 99 } }],
      });
      const worker = new Worker("mail", async (job) => job.name, { redis, prefix, concurrency: 10 });
      let completed = 0;
      for (let round = 0; round < 5 && completed < 22; round++) completed += (await worker.drain()).completed;
      expect({ prefix, completed }).toEqual({ prefix, completed: 22 });
      expect(await queue.getJobCounts("completed", "waiting", "waiting-children")).toEqual({
        completed: 22,
        waiting: 0,
        "waiting-children": 0,
      });
    }
    // The queues really are spread: at least two masters hold keys, and each loaded the scripts it ran.
    const perNode = await Promise.all(
      nodes.map(async (node) => {
        const client = new IORedis({ host: node.host, port: node.port });
        const keys = await client.dbsize();
        client.disconnect();
        return keys;
      }),
    );
    expect(perNode.filter((keys) => keys > 0).length).toBeGreaterThanOrEqual(2);
    // A SCAN walk (the CLI's) goes through every master: it finds each queue's completed set.
    const found: string[] = [];
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, { match: "{tenant-*}:mail:completed", count: 1000 });
      found.push(...keys);
      cursor = next;
    } while (cursor !== "0");
    expect(found.sort()).toEqual(prefixes.map((prefix) => `${prefix}:mail:completed`).sort());
  });
});

describe("the sweeper on a cluster", () => {
  it("runs one loop per hash-tagged prefix (one slot group each): every queue's delayed job is promoted", async () => {
    const prefixes = ["{sweep-a}", "{sweep-b}", "{sweep-c}", "{sweep-d}"];
    for (const prefix of prefixes)
      await new Queue("mail", { redis, prefix }).add("later", {}, { delay: 150 });
    const sweeper = createSweeper(
      { queues: prefixes.map((prefix) => ({ name: "mail", prefix })), mode: "once", releaseLock: true },
      { connect: () => redis, startWorkers: async () => {} },
    );
    await sweeper.run({ token: "first", remainingMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const result = await sweeper.run({ token: "second", remainingMs: 10_000 });
    expect(result.promoted).toBe(prefixes.length);
    for (const prefix of prefixes)
      expect(await new Queue("mail", { redis, prefix }).getJobCounts("waiting", "delayed")).toEqual({
        waiting: 1,
        delayed: 0,
      });
  });
});
