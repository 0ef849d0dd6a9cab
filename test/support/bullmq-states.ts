/**
 * Fills a queue with jobs in every state through one producer (nimbusq or BullMQ), using a real
 * BullMQ Worker for the states only a worker reaches, then reads it back through both libraries'
 * getters so a test can hold them side by side.
 */
import type { Job as BullJob, JobType as BullJobType } from "bullmq";
import { expect } from "vitest";
import type { Job, JobType } from "../../core/index.ts";
import { bullView, type Interop, producer, waitFor } from "./bullmq-peer.ts";

/** Every job id `populate` writes to queue `g`, by the state it ends in. */
export const populated = {
  completed: ["1", "2", "3"],
  failed: ["4"],
  active: ["5"],
  waiting: ["6", "7", "8", "custom-1", "PC"],
  prioritized: ["9", "10"],
  delayed: ["11", "12", "13"],
  "waiting-children": ["P"],
} as const;

/**
 * Writes the jobs (all through `which`) and leaves a BullMQ worker holding job 5. Every job names its
 * timestamp (`base` + n); returns `base`.
 */
export async function populate(
  io: Interop,
  which: "nimbusq" | "bullmq",
  base = Date.now() - 60_000,
): Promise<number> {
  const p = producer(io, which);
  await p.add("g", "c1", { n: 1 }, { removeOnComplete: false, timestamp: base });
  await p.add("g", "prog", { n: 2 }, { timestamp: base + 1 });
  await p.add("g", "c3", { n: 3 }, { attempts: 2, backoff: 10, timestamp: base + 2 });
  await p.add("g", "f1", { n: 4 }, { attempts: 2, timestamp: base + 3 });
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let failedOnce = false;
  const gWorker = io.worker("g", async (job) => {
    if (job.name === "prog") {
      await job.updateProgress({ pct: 50 });
      return 7;
    }
    if (job.name === "c3" && !failedOnce) {
      failedOnce = true;
      throw new Error("first try fails");
    }
    if (job.name === "f1") throw new Error(`failure ${job.attemptsMade + 1}`);
    if (job.name === "hold") {
      await held;
      return undefined;
    }
    return { ok: job.name };
  });
  // Closing the kit's workers (force) must not wait for the held job.
  gWorker.worker.on("closing", () => release());
  await waitFor(async () => {
    const counts = await io.raw.multi().zcard(io.key("g", "completed")).zcard(io.key("g", "failed")).exec();
    return counts?.[0]?.[1] === 3 && counts?.[1]?.[1] === 1;
  }, "three completions and one failure");
  await p.add("g", "hold", {}, { timestamp: base + 4 });
  await waitFor(() => gWorker.seen.some((s) => s.name === "hold"), "the worker to hold job 5");
  await p.add("g", "w1", { w: 1 }, { timestamp: base + 5 });
  await p.add("g", "w2", { w: 2 }, { timestamp: base + 6, removeOnFail: { count: 3, age: 60 } });
  await p.add("g", "wl", {}, { lifo: true, timestamp: base + 7 });
  await p.add("g", "p3", {}, { priority: 3, timestamp: base + 8 });
  await p.add(
    "g",
    "p1",
    {},
    { priority: 1, timestamp: base + 9, attempts: 4, backoff: { type: "exponential", delay: 5 } },
  );
  await p.add("g", "d1", {}, { delay: 120_000, timestamp: base + 10 });
  await p.add("g", "d2", {}, { delay: 100_000, timestamp: base + 11, priority: 2 });
  await p.add(
    "g",
    "dd",
    { x: 1 },
    { delay: 110_000, timestamp: base + 12, deduplication: { id: "dd", ttl: 60_000 } },
  );
  await p.add("g", "custom", { c: true }, { jobId: "custom-1", timestamp: base + 13, keepLogs: 5 });
  await p.flow({
    name: "parent",
    queueName: "g",
    data: { parent: true },
    opts: { jobId: "P", timestamp: base + 14 },
    children: [
      { name: "pending-kid", queueName: "kids-idle", opts: { jobId: "idle-kid", failParentOnFailure: true } },
    ],
  });
  await p.flow({
    name: "parent-done",
    queueName: "g",
    opts: { jobId: "PC", timestamp: base + 15 },
    children: [
      { name: "k1", queueName: "kids", data: { k: 1 }, opts: { jobId: "k1" } },
      {
        name: "k2",
        queueName: "kids",
        data: { k: 2 },
        opts: { jobId: "k2", ignoreDependencyOnFailure: true },
      },
    ],
  });
  io.worker("kids", (job) => ({ kid: job.name }));
  await waitFor(async () => (await io.raw.lpos(io.key("g", "wait"), "PC")) !== null, "PC's release");
  return base;
}

/** Both libraries' view of one job, side by side. */
export async function bothJobs(io: Interop, queue: string, id: string) {
  const ours: Job | undefined = await io.queue(queue).getJob(id);
  const theirs: BullJob | undefined = await io.bullQueue(queue).getJob(id);
  return { ours, theirs };
}

/** BullMQ 6's typings dropped `paused`, which its getters still accept (the legacy list). */
const bullTypes = (types: JobType[]) => types as BullJobType[];

const listGetters = [
  "getWaiting",
  "getActive",
  "getDelayed",
  "getPrioritized",
  "getCompleted",
  "getFailed",
  "getWaitingChildren",
] as const;

/** What nimbusq's and BullMQ's getters say about queue `g`, asserting they agree, for comparing runs. */
export async function readBack(io: Interop) {
  const ours = io.queue("g");
  const theirs = io.bullQueue("g");
  const snapshot: Record<string, unknown> = {};
  const ids = Object.values(populated).flat();
  for (const id of [...ids, "no-such-job"]) {
    const both = await bothJobs(io, "g", id);
    expect(bullView(both.ours), id).toEqual(bullView(both.theirs));
    const state = await both.ours?.getState();
    expect(state, id).toBe(await both.theirs?.getState());
    snapshot[id] = { ...bullView(both.ours), state };
  }
  for (const [state, list] of Object.entries(populated)) {
    for (const id of list) expect(snapshot[id], id).toMatchObject({ state });
  }
  snapshot.counts = await ours.getJobCounts();
  expect(snapshot.counts).toEqual(await theirs.getJobCounts());
  const someTypes: JobType[] = ["wait", "paused", "delayed", "waiting-children", "completed"];
  expect(await ours.getJobCounts(...someTypes)).toEqual(await theirs.getJobCounts(...bullTypes(someTypes)));
  expect(await ours.count()).toBe(await theirs.count());
  for (const getter of listGetters) {
    const mine = (await ours[getter]()).map(bullView);
    expect(mine, getter).toEqual((await theirs[getter]()).map(bullView));
    snapshot[getter] = mine.map((job) => job?.id);
  }
  const ranges: [JobType[], number, number, boolean][] = [
    [["waiting", "prioritized", "delayed"], 0, -1, true],
    [["waiting", "prioritized", "delayed"], 0, -1, false],
    [["waiting", "completed"], 1, 2, true],
    [["waiting", "completed"], 1, 2, false],
    [["delayed", "failed", "waiting-children", "active"], 0, 0, true],
    [["wait", "waiting", "paused"], 2, -1, true],
    [["completed"], 5, 9, false],
    [[], 0, -1, false],
  ];
  for (const [types, start, end, asc] of ranges) {
    const mine = (await ours.getJobs(types, start, end, asc)).map((job) => job.id);
    const label = `getJobs(${types.join(",")}, ${start}, ${end}, ${asc})`;
    expect(mine, label).toEqual(
      (await theirs.getJobs(bullTypes(types), start, end, asc)).map((job) => job.id),
    );
    snapshot[label] = mine;
  }
  for (const id of ["P", "PC"]) {
    const both = await bothJobs(io, "g", id);
    const values = await both.ours?.getChildrenValues();
    expect(values, id).toEqual(await both.theirs?.getChildrenValues());
    const deps = await both.ours?.getDependenciesCount();
    expect(deps, id).toEqual(await both.theirs?.getDependenciesCount());
    snapshot[`${id}:children`] = { values, deps };
  }
  return JSON.parse(JSON.stringify(snapshot).replaceAll(io.prefix, "<prefix>")) as Record<string, unknown>;
}
