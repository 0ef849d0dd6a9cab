/**
 * `?wait=` requests of one app share their polling (issue 24, point 3): eight requests waiting on one
 * queue cost one stream read a round between them (counted on a private REST server), they all answer
 * when a worker finishes their jobs, and where the stream stays quiet (workers at events level none)
 * each request still learns from its job hash within a few seconds.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { Queue, Worker } from "../../core/index.ts";
import { sleep } from "../support/bullmq-peer.ts";
import { field, makeApi } from "../support/http-app.ts";
import { type PrivateStack, startPrivateStack } from "../support/stack.ts";

let stack: PrivateStack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(() => stack.stop());

it("eight waits on one queue poll it once a round between them, and all answer when their jobs finish", async () => {
  const api = makeApi({ redis: stack.redis });
  const queue = new Queue("q", { redis: stack.redis, prefix: api.prefix });
  const jobs = await queue.addBulk(Array.from({ length: 8 }, (_, n) => ({ name: "w", data: { n } })));
  const waits = jobs.map((job) => api.call("GET", `/queues/q/jobs/${job.id}?wait=20000`));
  // Past the requests' own reads of their jobs, only the watch reads Redis.
  await sleep(500);
  stack.rest.resetStats();
  await sleep(2500);
  const { billed } = stack.rest.stats();
  // Rounds slow to one a second: about three in this window, one read each (eight polling their own
  // hashes would have made some twenty-four).
  expect(billed).toBeGreaterThanOrEqual(1);
  expect(billed).toBeLessThanOrEqual(5);

  const worker = new Worker("q", async (job) => (job.data as { n: number }).n * 10, {
    redis: stack.redis,
    prefix: api.prefix,
  });
  await worker.drain();
  const answers = await Promise.all(waits);
  expect(answers.map((answer) => field<string>(answer, "state"))).toEqual(Array(8).fill("completed"));
  expect(answers.map((answer) => field<number>(answer, "returnvalue"))).toEqual(jobs.map((_, n) => n * 10));
});

it("a job finished by workers that write no events is still seen, from its hash, while the stream is quiet", async () => {
  const api = makeApi({ redis: stack.redis });
  const queue = new Queue("q", { redis: stack.redis, prefix: api.prefix, events: "none" });
  const job = await queue.add("quiet", { n: 1 });
  const started = Date.now();
  const waiting = api.call("GET", `/queues/q/jobs/${job.id}?wait=15000`);
  await sleep(200);
  const worker = new Worker("q", async () => "done", {
    redis: stack.redis,
    prefix: api.prefix,
    events: "none",
  });
  await worker.drain();
  const answer = await waiting;
  expect(answer.body).toMatchObject({ id: job.id, state: "completed", returnvalue: "done" });
  // Answered by the hash read after 5 quiet seconds, well before the 15 s bound.
  expect(Date.now() - started).toBeLessThan(13_000);
});
