/**
 * Billed Redis commands per job for adds, nimbusq (REST server counter, INFO commandstats as a
 * cross-check) next to BullMQ 6.7.0 (INFO commandstats), on one private redis-server each run.
 *
 *   npx tsx test/bench/producer-cost.ts
 */
import { Queue as BullQueue } from "bullmq";
import { Redis as IORedis } from "ioredis";
import { createRedis, Queue } from "../../core/index.ts";
import { startRedisServer } from "../../infra/redis-server.ts";
import { startRestServer } from "../../infra/rest-server/server.ts";

async function totalCalls(direct: IORedis): Promise<number> {
  const info = await direct.info("commandstats");
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (match[1] !== "info") total += Number(match[2]);
  }
  return total;
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  const rest = await startRestServer({ redis: { host: server.host, port: server.port }, token: "bench" });
  const direct = new IORedis({ host: server.host, port: server.port });
  const redis = createRedis({ url: rest.url, token: rest.token });
  const rows: { case: string; nimbusq: number; nimbusqCrossCheck: number; bullmq: number }[] = [];
  try {
    const ours = new Queue("nq", { redis });
    const theirs = new BullQueue("bq", { connection: { host: server.host, port: server.port } });
    await ours.add("warm", {});
    await theirs.add("warm", {});
    const singles = 20;
    const bulk = Array.from({ length: 100 }, (_, n) => ({ name: "b", data: { n } }));

    const measure = async (action: () => Promise<unknown>) => {
      rest.resetStats();
      const before = await totalCalls(direct);
      await action();
      return { billed: rest.stats().billed, calls: (await totalCalls(direct)) - before };
    };
    const ourAdd = await measure(async () => {
      for (let i = 0; i < singles; i++) await ours.add("x", { i });
    });
    const theirAdd = await measure(async () => {
      for (let i = 0; i < singles; i++) await theirs.add("x", { i });
    });
    rows.push({
      case: "add (per job)",
      nimbusq: ourAdd.billed / singles,
      nimbusqCrossCheck: ourAdd.calls / singles,
      bullmq: theirAdd.calls / singles,
    });
    const ourBulk = await measure(() => ours.addBulk(bulk));
    const theirBulk = await measure(() => theirs.addBulk(bulk));
    rows.push({
      case: "addBulk of 100 (per job)",
      nimbusq: ourBulk.billed / 100,
      nimbusqCrossCheck: ourBulk.calls / 100,
      bullmq: theirBulk.calls / 100,
    });
    const ourDelayed = await measure(() => ours.add("d", {}, { delay: 5000 }));
    const theirDelayed = await measure(() => theirs.add("d", {}, { delay: 5000 }));
    rows.push({
      case: "delayed add",
      nimbusq: ourDelayed.billed,
      nimbusqCrossCheck: ourDelayed.calls,
      bullmq: theirDelayed.calls,
    });
    await theirs.close();
  } finally {
    direct.disconnect();
    await rest.close();
    await server.stop();
  }
  console.log("billed Redis commands (EVAL/EVALSHA + every redis.call inside; INFO excluded)");
  console.table(rows);
  console.log(JSON.stringify({ producerCost: rows }));
}

await main();
