/**
 * `Queue.getJobs` over ranges larger than one page (400 jobs a call) reads in pages and answers what
 * bullmq@6.7.0's getJobs answers on the same queue: the same jobs in the same order, for lists and
 * sets, ascending and descending, across several types and from a start past the first page.
 */
import { describe, expect, it } from "vitest";
import { twins, useTwins } from "../support/twin-queues.ts";

useTwins();

describe("getJobs over a large range", () => {
  it("pages through the range and agrees with BullMQ", async () => {
    const t = twins("pages");
    const queue = t.queue("n");
    const jobs = Array.from({ length: 1300 }, (_, i) => ({
      name: "j",
      data: { i },
      opts: i % 3 === 1 ? { delay: 3_600_000 + i } : i % 3 === 2 ? { priority: 1 + (i % 5) } : undefined,
    }));
    for (let from = 0; from < jobs.length; from += 1000) await queue.addBulk(jobs.slice(from, from + 1000));
    const bull = t.bull("n");
    const cases: [("wait" | "delayed" | "prioritized")[], number, number, boolean][] = [
      [["wait"], 0, -1, true],
      [["delayed", "wait", "prioritized"], 100, 900, false],
      [["prioritized", "delayed"], 0, 700, true],
      [["wait"], 450, 700, false],
    ];
    for (const [types, start, end, asc] of cases) {
      const ours = (await queue.getJobs(types, start, end, asc)).map((job) => job.id);
      const theirs = (await bull.getJobs(types, start, end, asc)).map((job) => job.id);
      expect(ours, JSON.stringify([types, start, end, asc])).toEqual(theirs);
    }
    expect((await queue.getJobs([], 0, -1)).length).toBe(1300);
  });
});
