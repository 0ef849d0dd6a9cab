/**
 * Billed Redis commands and HTTP requests per job for a full lifecycle (add, lease, complete, no-op
 * processor) and for a job failing 3 attempts with backoff: nimbusq at several batch sizes (REST
 * server counters) next to BullMQ 6.7.0 (INFO commandstats, from the add until the last job is done).
 *
 *   npx tsx test/bench/lifecycle-cost.ts
 */
import { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import { Redis as IORedis } from "ioredis";
import { createRedis, Queue, Worker } from "../../core/index.ts";
import { startRedisServer } from "../../infra/redis-server.ts";
import { startRestServer } from "../../infra/rest-server/server.ts";

async function totalCalls(direct: IORedis): Promise<number> {
  const info = await direct.info("commandstats");
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    if (match[1] !== "info") total += Number(match[2]);
  return total;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const server = await startRedisServer();
  const rest = await startRestServer({ redis: { host: server.host, port: server.port }, token: "bench" });
  const direct = new IORedis({ host: server.host, port: server.port });
  const redis = createRedis({ url: rest.url, token: rest.token });
  const connection = { host: server.host, port: server.port, maxRetriesPerRequest: null };
  const rows: Record<string, string | number>[] = [];
  try {
    const jobs = 50;
    for (const batchSize of [1, 10, 50, 100]) {
      const name = `nq-${batchSize}`;
      const queue = new Queue(name, { redis });
      const worker = new Worker(name, async () => undefined, { redis, batchSize });
      await queue.add("warm", {});
      await worker.drain();
      rest.resetStats();
      const count = Math.max(jobs, batchSize);
      await queue.addBulk(Array.from({ length: count }, (_, n) => ({ name: "n", data: { n } })));
      await worker.drain();
      const { billed, requests } = rest.stats();
      rows.push({
        case: `lifecycle, nimbusq batch ${batchSize}`,
        billedPerJob: billed / count,
        requestsPerJob: requests / count,
      });
    }
    {
      // The worker is started and idle first, so its start-up commands are not counted.
      const queue = new BullQueue("bq", { connection });
      const done = { n: 0 };
      const worker = new BullWorker("bq", async () => undefined, { connection, concurrency: 50 });
      worker.on("completed", () => {
        done.n += 1;
      });
      await worker.waitUntilReady();
      await sleep(300);
      const before = await totalCalls(direct);
      await queue.addBulk(Array.from({ length: jobs }, (_, n) => ({ name: "n", data: { n } })));
      while (done.n < jobs) await sleep(5);
      const billed = (await totalCalls(direct)) - before;
      await worker.close();
      await queue.close();
      rows.push({
        case: "lifecycle, BullMQ concurrency 50",
        billedPerJob: billed / jobs,
        requestsPerJob: "-",
      });
    }
    const failing = { attempts: 3, backoff: { type: "fixed", delay: 20 } };
    for (const count of [1, 50]) {
      const name = `nq-fail-${count}`;
      const queue = new Queue(name, { redis });
      const worker = new Worker(
        name,
        async () => {
          throw new Error("always");
        },
        { redis, batchSize: 50 },
      );
      await queue.add("warm", {});
      await worker.drain();
      rest.resetStats();
      await queue.addBulk(
        Array.from({ length: count }, (_, n) => ({ name: "n", data: { n }, opts: failing })),
      );
      for (let i = 0; i < 3; i++) {
        await worker.drain();
        await sleep(40);
      }
      const { billed, requests } = rest.stats();
      rows.push({
        case: `3 failed attempts, nimbusq ${count} job(s)`,
        billedPerJob: billed / count,
        requestsPerJob: requests / count,
      });
    }
    {
      const queue = new BullQueue("bq-fail", { connection });
      const failed = { n: 0 };
      const worker = new BullWorker(
        "bq-fail",
        async () => {
          throw new Error("always");
        },
        { connection },
      );
      worker.on("failed", (job) => {
        if (job && job.attemptsMade >= 3) failed.n += 1;
      });
      await worker.waitUntilReady();
      await sleep(300);
      const before = await totalCalls(direct);
      await queue.add("n", {}, failing);
      while (failed.n < 1) await sleep(5);
      const billed = (await totalCalls(direct)) - before;
      await worker.close();
      await queue.close();
      rows.push({ case: "3 failed attempts, BullMQ 1 job", billedPerJob: billed, requestsPerJob: "-" });
    }
  } finally {
    direct.disconnect();
    await rest.close();
    await server.stop();
  }
  console.table(rows);
  console.log(JSON.stringify({ lifecycleCost: rows }));
}

await main();
