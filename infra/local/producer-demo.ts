/**
 * The producer demo `npm start` runs: adds one job of every kind to two queues over the REST API and
 * prints what the queues hold.
 */
import type { Redis } from "@upstash/redis";
import { FlowProducer, Queue } from "../../core/index.ts";

export async function runProducerDemo(redis: Redis, log: (line: string) => void): Promise<void> {
  const emails = new Queue("email", { redis });
  const reports = new Queue("report", { redis });
  const flow = new FlowProducer({ redis });
  const added = [
    await emails.add(
      "welcome",
      { to: "ada@example.com" },
      { attempts: 3, backoff: { type: "exponential", delay: 1000 } },
    ),
    await emails.add("reminder", { to: "alan@example.com" }, { delay: 60_000 }),
    await emails.add("password-reset", { to: "grace@example.com" }, { priority: 1 }),
    await emails.add("digest", { to: "edsger@example.com" }, { lifo: true }),
    await emails.add("receipt", { order: 42 }, { jobId: "receipt-42" }),
    await emails.add("receipt", { order: 42 }, { jobId: "receipt-42" }),
    await emails.add("sync", { user: 7 }, { deduplication: { id: "sync-user-7", ttl: 30_000 } }),
    await emails.add("sync", { user: 7 }, { deduplication: { id: "sync-user-7", ttl: 30_000 } }),
    ...(await emails.addBulk(Array.from({ length: 5 }, (_, n) => ({ name: "newsletter", data: { n } })))),
  ];
  log(`added to "email": ${added.map((job) => `${job.name}#${job.id}`).join(", ")}`);
  const tree = await flow.add({
    name: "monthly-report",
    queueName: "report",
    data: { month: "2026-11" },
    children: [
      { name: "collect-sales", queueName: "report", data: { source: "sales" } },
      { name: "render-chart", queueName: "email", data: { chart: "revenue" } },
    ],
  });
  log(`flow: "${tree.job.name}" #${tree.job.id} waits for ${tree.children?.length ?? 0} children`);
  log(`email counts:  ${JSON.stringify(await emails.getJobCounts())}`);
  log(`report counts: ${JSON.stringify(await reports.getJobCounts())}`);
  const state = await (await emails.getJob("receipt-42"))?.getState();
  log(`job receipt-42 is ${state}`);
}
