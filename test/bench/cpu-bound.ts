/**
 * CPU-bound processors and the worker's leases (issue 23, point 3): `npx tsx test/bench/cpu-bound.ts`.
 * Each case adds its jobs, drains them with one Worker and reports the leases lost, the acks refused,
 * the event loop's longest stall (a 20 ms timer's worst lateness: how late an extension could go
 * out) and the wall time. Inline processors burn the CPU in the worker's own thread (the gate gives
 * the event loop a turn between starts and extends before each start when due); processor files run
 * in worker threads (sandbox/), leaving the loop free. A bounded run, about two minutes.
 */
import { fileURLToPath } from "node:url";
import { type ActiveJob, createRedis, Queue, Worker, type WorkerOptions } from "../../core/index.ts";
import "../../sandbox/register.ts";
import { startRedisServer } from "../../infra/redis-server.ts";
import { startRestServer } from "../../infra/rest-server/server.ts";
import { loopLag } from "../support/loop-lag.ts";

const cpuFile = fileURLToPath(new URL("../worker/fixtures/cpu-processor.mjs", import.meta.url));

function burn(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}

interface Case {
  label: string;
  jobs: number;
  jobMs: number;
  sandboxed: boolean;
  options: Partial<WorkerOptions>;
}

const cases: Case[] = [
  {
    label: "defaults (concurrency 1, batchSize 10, lease 30 s), ten 4 s jobs",
    jobs: 10,
    jobMs: 4000,
    sandboxed: false,
    options: { concurrency: 1 },
  },
  {
    label: "concurrency 1, batchSize 6, lease 3 s, six 2 s jobs",
    jobs: 6,
    jobMs: 2000,
    sandboxed: false,
    options: { concurrency: 1, batchSize: 6, leaseMs: 3000 },
  },
  {
    label: "processor file, defaults, ten 4 s jobs",
    jobs: 10,
    jobMs: 4000,
    sandboxed: true,
    options: { concurrency: 1 },
  },
  {
    label: "processor file, concurrency 2, lease 3 s, ten 2 s jobs",
    jobs: 10,
    jobMs: 2000,
    sandboxed: true,
    options: { concurrency: 2, leaseMs: 3000 },
  },
];

const redisServer = await startRedisServer();
const rest = await startRestServer({
  redis: { host: redisServer.host, port: redisServer.port },
  token: "cpu",
});
const redis = createRedis({ url: rest.url, token: rest.token, checkClock: false });
try {
  console.log("| case | completed | leases lost | acks refused | longest event-loop stall | wall time |");
  console.log("|---|---|---|---|---|---|");
  for (const [index, c] of cases.entries()) {
    const prefix = `cpu-${Date.now().toString(36)}-${index}`;
    await new Queue("q", { redis, prefix }).addBulk(
      Array.from({ length: c.jobs }, (_, n) => ({ name: "crunch", data: { n, ms: c.jobMs } })),
    );
    const processor = c.sandboxed
      ? cpuFile
      : async (job: ActiveJob) => {
          burn((job.data as { ms: number }).ms);
          return job.id;
        };
    const worker = new Worker("q", processor, { redis, prefix, ...c.options });
    let refused = 0;
    worker.on("error", (error) => {
      if (/ack refused/.test(error.message)) refused += 1;
    });
    const started = Date.now();
    const { result: summary, maxLagMs: stall } = await loopLag(() => worker.drain());
    const wall = Date.now() - started;
    await worker.close();
    console.log(
      `| ${c.label} | ${summary.completed}/${c.jobs} | ${summary.lostLeases} | ${refused} | ${stall} ms | ${(wall / 1000).toFixed(1)} s |`,
    );
  }
} finally {
  await rest.close();
  await redisServer.stop();
}
