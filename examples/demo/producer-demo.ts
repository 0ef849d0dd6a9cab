/**
 * The jobs `npm start` adds when it starts: emails (a third of the sends fail and are retried with
 * exponential backoff), a priority email, a delayed one, a duplicate and a deduplicated add, and a
 * monthly report flow whose parent waits for its two children.
 */
import type { Redis } from "@upstash/redis";
import { FlowProducer, Queue } from "../../core/index.ts";
import { demoQueue } from "./demo-queues.ts";

const options = (name: string) => demoQueue(name).defaultJobOptions;

export async function runProducerDemo(redis: Redis, log: (line: string) => void): Promise<void> {
  const emails = new Queue("email", { redis, defaultJobOptions: options("email") });
  const reports = new Queue("report", { redis, defaultJobOptions: options("report") });
  const added = [
    ...(await emails.addBulk(
      ["ada", "alan", "grace", "edsger", "barbara", "donald"].map((who) => ({
        name: "welcome",
        data: { to: `${who}@example.com` },
      })),
    )),
    await emails.add("password-reset", { to: "grace@example.com" }, { priority: 1 }),
    await emails.add("reminder", { to: "alan@example.com" }, { delay: 15_000 }),
    await emails.add("receipt", { to: "ada@example.com", order: 42 }, { jobId: "receipt-42" }),
    await emails.add("receipt", { to: "ada@example.com", order: 42 }, { jobId: "receipt-42" }),
    await emails.add("sync", { user: 7 }, { deduplication: { id: "sync-user-7", ttl: 30_000 } }),
    await emails.add("sync", { user: 7 }, { deduplication: { id: "sync-user-7", ttl: 30_000 } }),
  ];
  log(`added to "email": ${added.map((job) => `${job.name}#${job.id}`).join(", ")}`);
  const tree = await new FlowProducer({ redis }).add({
    name: "monthly-report",
    queueName: "report",
    data: { month: "2026-11" },
    opts: options("report"),
    children: [
      {
        name: "sales-section",
        queueName: "report",
        data: { month: "2026-11", section: "sales" },
        opts: options("report"),
      },
      { name: "summary-email", queueName: "email", data: { to: "cfo@example.com" }, opts: options("email") },
    ],
  });
  log(`flow: "${tree.job.name}" #${tree.job.id} waits for ${tree.children?.length ?? 0} children`);
  log(`email counts:  ${JSON.stringify(await emails.getJobCounts())}`);
  log(`report counts: ${JSON.stringify(await reports.getJobCounts())}`);
}
