/**
 * What BullMQ 6.7.0's readers see of nimbusq's Worker: a real QueueEvents gets its events with BullMQ's
 * fields (per-event listeners included), `job.waitUntilFinished(queueEvents)` on a job from BullMQ's
 * `Queue.add` settles with nimbusq's result or failure, and `Queue.getJob` / `getJobLogs` show what
 * the nimbusq processor did.
 */
import { describe, expect, it } from "vitest";
import { type ActiveJob, UnrecoverableError } from "../../core/index.ts";
import { interopPeers, type RecordedEvent, sleep, waitFor } from "../support/bullmq-peer.ts";
import {
  byJob,
  delivered,
  type EitherJob,
  finished,
  nimbusWorker,
  processWith,
  recordAll,
  runLoop,
  type Side,
  sides,
} from "../support/mixed-fleet.ts";

const peers = interopPeers();

async function processor(job: EitherJob): Promise<unknown> {
  if (job.name === "ok") {
    await job.updateProgress(30);
    await job.updateProgress({ step: "half", pct: 50 });
    return { total: 42, items: ["a", "b"] };
  }
  if (job.name === "retried" && job.attemptsMade === 0) throw new Error("not yet");
  if (job.name === "fails") throw new Error(`broken on attempt ${job.attemptsMade + 1}`);
  if (job.name === "unrecoverable") throw new UnrecoverableError("no point retrying");
  return `done ${job.name}`;
}

describe("a real QueueEvents hears nimbusq's Worker", () => {
  it("active, progress, completed, failed, retries-exhausted, waiting and delayed, as from BullMQ's", async () => {
    const logs: Partial<Record<Side, RecordedEvent[]>> = {};
    const heard: Partial<Record<Side, string[]>> = {};
    for (const side of sides) {
      const io = peers(side);
      const log = await recordAll(io, "q");
      const { events } = await io.events("q");
      // Typed per-event listeners receive exactly the stream's fields.
      const said: string[] = [];
      events.on("active", ({ jobId, prev }) => said.push(`active ${jobId} ${prev}`));
      events.on("progress", ({ jobId, data }) => said.push(`progress ${jobId} ${JSON.stringify(data)}`));
      events.on("completed", ({ jobId, returnvalue }) =>
        said.push(`completed ${jobId} ${JSON.stringify(returnvalue)}`),
      );
      events.on("failed", ({ jobId, failedReason }) => said.push(`failed ${jobId} ${failedReason}`));
      events.on("retries-exhausted", ({ jobId, attemptsMade }) =>
        said.push(`retries-exhausted ${jobId} ${attemptsMade}`),
      );
      events.on("delayed", ({ jobId, delay }) => said.push(`delayed ${jobId} ${typeof delay}`));
      events.on("waiting", ({ jobId, prev }) => said.push(`waiting ${jobId} ${prev ?? "-"}`));
      const queue = io.bullQueue("q");
      await queue.add("ok", {});
      await queue.add("retried", {}, { attempts: 2, backoff: 300 });
      await queue.add("fails", {}, { attempts: 2 });
      await queue.add("unrecoverable", {}, { attempts: 4 });
      processWith(io, side, "q", processor);
      await finished(io, "q", 4);
      logs[side] = await delivered(io, "q", log);
      await waitFor(() => said.filter((s) => s.startsWith("retries-exhausted")).length === 1, "all events");
      heard[side] = said;
    }
    expect(byJob(logs.nimbusq ?? [])).toEqual(byJob(logs.bullmq ?? []));
    expect(heard.nimbusq).toEqual(heard.bullmq);
    expect(heard.nimbusq).toEqual([
      "waiting 1 -",
      "waiting 2 -",
      "waiting 3 -",
      "waiting 4 -",
      "active 1 waiting",
      "progress 1 30",
      'progress 1 {"step":"half","pct":50}',
      'completed 1 {"total":42,"items":["a","b"]}',
      "active 2 waiting",
      "delayed 2 number",
      "active 3 waiting",
      "waiting 3 active",
      "active 4 waiting",
      "failed 4 no point retrying",
      "active 3 waiting",
      "failed 3 broken on attempt 2",
      "retries-exhausted 3 2",
      "waiting 2 delayed",
      "active 2 waiting",
      'completed 2 "done retried"',
    ]);
  });

  it("job.waitUntilFinished(queueEvents) settles with nimbusq's result or failedReason", async () => {
    const io = peers();
    const { events } = await io.events("q");
    const queue = io.bullQueue("q");
    const early = await queue.add("early", {});
    const worker = nimbusWorker(io, "q", (job: ActiveJob) => processor(job), { batchSize: 1 });
    expect((await worker.drain()).completed).toBe(1);
    // Finished before anyone waited: BullMQ's isFinished reads nimbusq's completed set and returnvalue.
    expect(await early.waitUntilFinished(events, 5000)).toBe("done early");
    const ok = await queue.add("ok", {});
    const retried = await queue.add("retried", {}, { attempts: 2, backoff: 50 });
    const fails = await queue.add("fails", {}, { attempts: 1 });
    const unrecoverable = await queue.add("unrecoverable", {}, { attempts: 3 });
    const waits = [ok, retried, fails, unrecoverable].map((job) =>
      job.waitUntilFinished(events, 8000).then(
        (value: unknown) => ({ value }),
        (error: Error) => ({ error: error.message }),
      ),
    );
    await sleep(50);
    runLoop(io, worker);
    expect(await Promise.all(waits)).toEqual([
      { value: { total: 42, items: ["a", "b"] } },
      // The failed first attempt is a retry: no `failed` event, so the wait goes on to the result.
      { value: "done retried" },
      { error: "broken on attempt 1" },
      { error: "no point retrying" },
    ]);
  });

  it("Queue.getJob and getJobLogs show what the nimbusq processor did", async () => {
    const io = peers();
    const queue = io.bullQueue("q");
    const done = await queue.add("report", { n: 1 }, { keepLogs: 3 });
    const failed = await queue.add("flaky", { n: 2 }, { attempts: 3, backoff: 10, stackTraceLimit: 2 });
    const worker = nimbusWorker(
      io,
      "q",
      async (job) => {
        for (let line = 1; line <= 4; line++) await job.log(`${job.name} line ${line}`);
        await job.updateProgress({ at: job.attemptsMade });
        if (job.name === "flaky") throw new TypeError(`flaky attempt ${job.attemptsMade + 1}`);
        return { summary: "all good", n: (job.data as { n: number }).n };
      },
      { name: "nimbus-worker" },
    );
    runLoop(io, worker);
    await finished(io, "q", 2);
    const report = await queue.getJob(done.id as string);
    expect(report).toMatchObject({
      returnvalue: { summary: "all good", n: 1 },
      attemptsMade: 1,
      attemptsStarted: 1,
      progress: { at: 0 },
      processedBy: "nimbus-worker",
      stacktrace: [],
    });
    expect(report?.failedReason).toBeUndefined();
    expect(report?.finishedOn).toBeGreaterThanOrEqual(report?.processedOn ?? Number.POSITIVE_INFINITY);
    expect(await report?.getState()).toBe("completed");
    expect(await queue.getJobLogs(done.id as string)).toEqual({
      logs: ["report line 2", "report line 3", "report line 4"],
      count: 3,
    });
    const flaky = await queue.getJob(failed.id as string);
    expect(flaky).toMatchObject({
      failedReason: "flaky attempt 3",
      attemptsMade: 3,
      attemptsStarted: 3,
      progress: { at: 2 },
      returnvalue: null,
    });
    expect((flaky?.stacktrace ?? []).map((trace) => trace.split("\n")[0])).toEqual([
      "TypeError: flaky attempt 2",
      "TypeError: flaky attempt 3",
    ]);
    expect(await flaky?.getState()).toBe("failed");
    const logs = await queue.getJobLogs(failed.id as string, 0, -1, false);
    expect(logs.count).toBe(12);
    expect(logs.logs.slice(0, 2)).toEqual(["flaky line 4", "flaky line 3"]);
  });
});
