/**
 * `GET /queues/:queue/jobs/:id?wait=<ms>`: answers once the job finishes (processed here by a real
 * BullMQ Worker or by nimbusq's Worker at events level none), or at the bound with the state then;
 * refuses a bad or too long wait naming the parameter; never outlives the Lambda invocation.
 */
import { Worker as BullWorker } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { Queue, Worker } from "../../core/index.ts";
import { httpHandler } from "../../functions/http/index.ts";
import { maxWaitMs } from "../../functions/http/job-wait.ts";
import { apiGatewayV2Event, lambdaContext } from "../support/aws-events.ts";
import { bullConnection, sleep } from "../support/bullmq-peer.ts";
import { expectError, field, makeApi, userToken } from "../support/http-app.ts";
import { sharedRedis } from "../support/stack.ts";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A BullMQ Worker on the API's queue: "slow" jobs take 300 ms, "bad" ones fail. */
function bullWorker(prefix: string, queue = "q"): void {
  const worker = new BullWorker(
    queue,
    async (job) => {
      await sleep(300);
      if (job.name === "bad") throw new Error(`bad input ${job.data.n}`);
      return { n: job.data.n, done: true };
    },
    { connection: bullConnection(), prefix },
  );
  worker.on("error", () => {});
  closers.push(() => worker.close(true));
}

describe("GET /queues/:queue/jobs/:id?wait=", () => {
  it("answers when the job completes or fails, with its return value or reason", async () => {
    const { call, prefix } = makeApi();
    const added = await call("POST", "/queues/q/jobs", {
      json: [
        { name: "slow", data: { n: 1 } },
        { name: "bad", data: { n: 2 } },
      ],
    });
    const [first, second] = field<{ id: string }[]>(added, "jobs");
    const waits = [
      call("GET", `/queues/q/jobs/${first?.id}?wait=10000`),
      call("GET", `/queues/q/jobs/${second?.id}?wait=10000`),
    ];
    // The worker starts after the requests: they can only answer with the finished states.
    await sleep(100);
    bullWorker(prefix);
    const [done, failed] = await Promise.all(waits);
    expect(done?.status).toBe(200);
    expect(done?.body).toMatchObject({
      id: first?.id,
      state: "completed",
      returnvalue: { n: 1, done: true },
    });
    expect(failed?.body).toMatchObject({ id: second?.id, state: "failed", failedReason: "bad input 2" });
  });

  it("answers at the bound with the job's state then; at once for a finished job; 404 for none", async () => {
    const { call } = makeApi();
    const added = await call("POST", "/queues/q/jobs", { json: { name: "never" } });
    const id = field<string>(added, "id");
    const bounded = await call("GET", `/queues/q/jobs/${id}?wait=300`);
    expect(bounded.status).toBe(200);
    expect(bounded.body).toMatchObject({ id, state: "waiting", finishedOn: null });
    expect((await call("GET", `/queues/q/jobs/${id}?wait=0`)).body).toMatchObject({ state: "waiting" });
    expectError(await call("GET", "/queues/q/jobs/nope?wait=1000"), 404, "job_not_found");
  });

  it("works at events level none (it polls the job, not the stream) with nimbusq's Worker", async () => {
    const api = makeApi({ events: "none" });
    const { prefix } = api;
    const added = await api.call("POST", "/queues/q/jobs", { json: { name: "ok", data: { n: 3 } } });
    const id = field<string>(added, "id");
    const waiting = api.call("GET", `/queues/q/jobs/${id}?wait=10000`);
    await sleep(100);
    const worker = new Worker("q", async (job) => ({ n: (job.data as { n: number }).n * 2 }), {
      redis: sharedRedis(),
      prefix,
      events: "none",
    });
    await worker.drain();
    const answer = await waiting;
    expect(answer.body).toMatchObject({ id, state: "completed", returnvalue: { n: 6 } });
  });

  it("answers 404 when the job is removed while the request waits (removeOnComplete)", async () => {
    const api = makeApi();
    const { prefix } = api;
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const job = await queue.add("slow", { n: 4 }, { removeOnComplete: true });
    const waiting = api.call("GET", `/queues/q/jobs/${job.id}?wait=10000`);
    await sleep(100);
    bullWorker(prefix);
    expectError(await waiting, 404, "job_not_found");
  });

  it("refuses a wait that is not an integer from 0 to 25000, naming the parameter", async () => {
    const { call } = makeApi();
    const added = await call("POST", "/queues/q/jobs", { json: { name: "x" } });
    const id = field<string>(added, "id");
    expect(maxWaitMs).toBe(25_000);
    for (const wait of ["25001", "100000000", "-1", "1.5", "1e3", "", "soon", "0x10"]) {
      const answer = await call("GET", `/queues/q/jobs/${id}?wait=${encodeURIComponent(wait)}`);
      expectError(answer, 400, "invalid_request", "wait");
      expect(field<string>(answer, "error", "message")).toMatch(/wait must be an integer .* 0 to 25000/);
    }
    expect((await call("GET", `/queues/q/jobs/${id}?wait=25000`, { token: null })).status).toBe(401);
  });

  it("under Lambda, ends before the invocation's time does, whatever wait asks", async () => {
    const api = makeApi();
    const { prefix } = api;
    const added = await api.call("POST", "/queues/q/jobs", { json: { name: "never" } });
    const id = field<string>(added, "id");
    const handler = httpHandler({ redis: sharedRedis(), prefix, tokens: [userToken], log: () => {} });
    // 3.6 s left: the wait of 25 s must end with 3 s to spare, about 0.6 s from now.
    const result = await handler(
      apiGatewayV2Event({
        method: "GET",
        path: `/queues/q/jobs/${id}`,
        query: { wait: "25000" },
        headers: { authorization: `Bearer ${userToken}` },
      }),
      lambdaContext({ remainingMs: 3_600 }),
    );
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body ?? "null")).toMatchObject({ id, state: "waiting" });
  });
});
