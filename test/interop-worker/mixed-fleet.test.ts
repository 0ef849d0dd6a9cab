/**
 * A mixed fleet on one queue: a real BullMQ 6.7.0 Worker (concurrency 10, its stalled checker running
 * every 500 ms) and nimbusq's run loop (short leases, extended while jobs run, and its own stalled
 * check every 250 ms) share 2,000 jobs added by BullMQ's Queue. Each job runs exactly once, nobody
 * sees a stall, and every job ends completed.
 */
import { describe, expect, it } from "vitest";
import { interopPeers, sleep } from "../support/bullmq-peer.ts";
import { nimbusWorker, runLoop } from "../support/mixed-fleet.ts";
import { misplacedJobs } from "../support/state-walk.ts";

const peers = interopPeers();
const total = 2000;

describe("BullMQ and nimbusq workers on one queue", () => {
  it("2,000 jobs: each runs exactly once, none stalls, all complete", async () => {
    const io = peers();
    const { events } = await io.events("q");
    const stalledEvents: string[] = [];
    events.on("stalled", ({ jobId }) => stalledEvents.push(jobId));
    const queue = io.bullQueue("q");
    const ids: string[] = [];
    for (let from = 0; from < total; from += 500) {
      const jobs = await queue.addBulk(
        Array.from({ length: 500 }, (_, i) => {
          const n = from + i;
          const opts = n % 10 === 3 ? { priority: 1 + (n % 4) } : n % 50 === 7 ? { lifo: true } : {};
          return { name: "work", data: { n }, opts };
        }),
      );
      ids.push(...jobs.map((job) => job.id as string));
    }
    const runs = new Map<string, string[]>();
    const note = (id: string, by: string) => runs.set(id, [...(runs.get(id) ?? []), by]);
    const work = async (id: string, by: string) => {
      note(id, by);
      await sleep(3);
      return { by };
    };
    const bullStalled: string[] = [];
    const bull = io.worker("q", (job) => work(job.id as string, "bullmq"), {
      concurrency: 10,
      stalledInterval: 500,
    });
    bull.worker.on("stalled", (jobId) => bullStalled.push(jobId));
    const nimbus = nimbusWorker(io, "q", (job) => work(job.id, "nimbusq"), {
      batchSize: 10,
      concurrency: 10,
      leaseMs: 1000,
      stalledInterval: 250,
    });
    const nimbusStalled: string[] = [];
    nimbus.on("stalled", (jobId) => nimbusStalled.push(jobId));
    const loop = runLoop(io, nimbus);
    let checking = true;
    const checker = (async () => {
      while (checking) {
        await nimbus.recoverStalled();
        await sleep(260);
      }
    })();

    const completed = io.key("q", "completed");
    const deadline = Date.now() + 40_000;
    let done = 0;
    while (done < total && Date.now() < deadline) {
      await sleep(100);
      done = await io.raw.zcard(completed);
    }
    checking = false;
    await checker;
    await loop.stop();
    await bull.worker.close();
    if (done < total) {
      throw new Error(
        `only ${done} of ${total} jobs completed in time (runs recorded: ${runs.size}; ` +
          `wait ${await io.raw.llen(io.key("q", "wait"))}, active ${await io.raw.llen(io.key("q", "active"))}, ` +
          `prioritized ${await io.raw.zcard(io.key("q", "prioritized"))})`,
      );
    }

    const twice = [...runs].filter(([, by]) => by.length !== 1).map(([id, by]) => `${id}: ${by.join(",")}`);
    expect(twice).toEqual([]);
    expect(runs.size).toBe(total);
    const share = { bullmq: 0, nimbusq: 0 };
    for (const [, [by]] of runs) share[by as keyof typeof share] += 1;
    expect(share.bullmq, "jobs run by BullMQ").toBeGreaterThan(total / 20);
    expect(share.nimbusq, "jobs run by nimbusq").toBeGreaterThan(total / 20);
    expect({ bullStalled, nimbusStalled, stalledEvents }).toEqual({
      bullStalled: [],
      nimbusStalled: [],
      stalledEvents: [],
    });
    const stream = await io.raw.xrange(io.key("q", "events"), "-", "+");
    expect(stream.filter(([, fields]) => fields[1] === "stalled")).toEqual([]);
    expect(await misplacedJobs(io.raw, `${io.prefix}:q`, ids)).toEqual([]);
    // Every job was started once and finished once, by whichever worker took it.
    const pipeline = io.raw.pipeline();
    for (const id of ids) pipeline.hmget(io.key("q", id), "ats", "atm", "stc", "returnvalue");
    const hashes = (await pipeline.exec()) ?? [];
    const odd = hashes
      .map(([, value], i) => [ids[i], value as (string | null)[]] as const)
      .filter(([id, [ats, atm, stc, returnvalue]]) => {
        const by = runs.get(id as string)?.[0];
        return ats !== "1" || atm !== "1" || stc !== null || returnvalue !== JSON.stringify({ by });
      });
    expect(odd).toEqual([]);
  }, 60_000);
});
