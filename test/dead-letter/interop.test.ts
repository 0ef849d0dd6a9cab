/**
 * Dead letters and real BullMQ 6.7.0: a dead letter is a normal BullMQ job (its Queue reads it, its
 * Worker runs it, its QueueEvents hears it), a redriven job too; and a BullMQ Worker failing a job
 * with `opts.deadLetter` ignores the option (the documented limitation: no dead letter then).
 */
import { describe, expect, it } from "vitest";
import { type DeadLetterData, Worker } from "../../core/index.ts";
import { interopPeers, waitFor } from "../support/bullmq-peer.ts";

const peers = interopPeers();

describe("dead letters with BullMQ", () => {
  it("a BullMQ Queue, QueueEvents and Worker see a dead letter as a normal job", async () => {
    const io = peers();
    const { log } = await io.events("dlq");
    const job = await io.queue("q").add("charge", "plain text data", { deadLetter: { queue: "dlq" } });
    const worker = new Worker(
      "q",
      async () => {
        throw new Error("card declined");
      },
      { redis: io.redis, prefix: io.prefix },
    );
    await worker.drain();
    const id = `dl:q:${job.id}`;
    const bull = io.bullQueue("dlq");
    const letter = await bull.getJob(id);
    expect(letter?.name).toBe("charge");
    expect(await letter?.getState()).toBe("waiting");
    expect(letter?.opts).toEqual({ attempts: 0 });
    const data = letter?.data as DeadLetterData;
    expect(data.job).toMatchObject({ id: job.id, queue: "q", data: "plain text data" });
    expect(data.failedReason).toBe("card declined");
    expect(await bull.getJobCounts("waiting")).toEqual({ waiting: 1 });
    await waitFor(() => log.length >= 2, "the dead letter's events");
    expect(log).toEqual([
      expect.objectContaining({ event: "added", jobId: id, name: "charge" }),
      expect.objectContaining({ event: "waiting", jobId: id }),
    ]);
    const alerts = io.worker("dlq", (j) => `alerted about ${(j.data as DeadLetterData).job.id}`);
    await alerts.started(1);
    expect(alerts.seen[0]).toMatchObject({ id, name: "charge" });
    await waitFor(async () => (await bull.getJobState(id)) === "completed", "the alert to complete");
    // A dead letter a BullMQ worker completed can still be redriven.
    const redriven = await io.queue("q").redrive({ from: "dlq" });
    expect(redriven.count).toBe(1);
    const again = await io.bullQueue("q").getJob(redriven.jobs[0]?.id as string);
    expect({ name: again?.name, data: again?.data, attemptsMade: again?.attemptsMade }).toEqual({
      name: "charge",
      data: "plain text data",
      attemptsMade: 0,
    });
    expect(again?.opts).toMatchObject({ attempts: 0, deadLetter: { queue: "dlq" } });
  });

  it("a BullMQ Worker failing a job with opts.deadLetter ignores it: no dead letter", async () => {
    const io = peers();
    const job = await io.queue("q").add("x", { n: 1 }, { deadLetter: { queue: "dlq" } });
    const bullWorker = io.worker("q", () => {
      throw new Error("bull failure");
    });
    await bullWorker.started(1);
    const bull = io.bullQueue("q");
    await waitFor(async () => (await bull.getJobState(job.id)) === "failed", "BullMQ to fail the job");
    expect(bullWorker.seen[0]?.opts).toMatchObject({ deadLetter: { queue: "dlq" } });
    expect(await io.raw.exists(io.key("dlq", `dl:q:${job.id}`), io.key("dlq", "wait"))).toBe(0);
  });
});
