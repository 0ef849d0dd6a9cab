import { describe, expect, it } from "vitest";
import { Queue, Worker } from "../../core/index.ts";
import { openApiDocument } from "../../functions/http/openapi.ts";
import { expectError, makeApi, redisPicture } from "../support/http-app.ts";
import { directConnectionForFile, sharedRedis } from "../support/stack.ts";

const direct = directConnectionForFile();

const fail = async (): Promise<never> => {
  throw new Error("no");
};

async function failedJobs(prefix: string, queue: string, count: number): Promise<void> {
  await new Queue(queue, { redis: sharedRedis(), prefix }).addBulk(
    Array.from({ length: count }, (_, i) => ({ name: "j", data: { i } })),
  );
  await new Worker(queue, fail, { redis: sharedRedis(), prefix }).drain();
}

describe("POST /queues/:queue/retry", () => {
  it("retries failed jobs (all, or up to count), answers how many, and kicks the worker", async () => {
    const kicked: string[] = [];
    const { admin, prefix } = makeApi({ kick: async (queue) => void kicked.push(queue) });
    await failedJobs(prefix, "q", 3);
    const some = await admin("POST", "/queues/q/retry", { json: { count: 2 } });
    expect(some).toMatchObject({ status: 200, body: { name: "q", state: "failed", retried: 2, more: true } });
    const rest = await admin("POST", "/queues/q/retry");
    expect(rest.body).toEqual({ name: "q", state: "failed", retried: 1, more: false });
    expect(await direct.llen(`${prefix}:q:wait`)).toBe(3);
    expect(await direct.zcard(`${prefix}:q:failed`)).toBe(0);
    expect(kicked).toEqual(["q", "q"]);
    const none = await admin("POST", "/queues/q/retry", { json: { state: "completed" } });
    expect(none.body).toEqual({ name: "q", state: "completed", retried: 0, more: false });
    expect(kicked).toHaveLength(2);
  });
});

describe("POST /queues/:queue/clean", () => {
  it("deletes the jobs of a state older than grace and answers how many", async () => {
    const { admin, prefix } = makeApi();
    await failedJobs(prefix, "q", 4);
    const young = await admin("POST", "/queues/q/clean", { json: { grace: 3_600_000, state: "failed" } });
    expect(young.body).toEqual({ name: "q", state: "failed", cleaned: 0 });
    const limited = await admin("POST", "/queues/q/clean", { json: { grace: 0, state: "failed", limit: 3 } });
    expect(limited.body).toEqual({ name: "q", state: "failed", cleaned: 3 });
    expect(await direct.zrange(`${prefix}:q:failed`, 0, -1)).toEqual(["4"]);
    const events = await direct.xrange(`${prefix}:q:events`, "-", "+");
    expect(events.filter(([, f]) => f[1] === "cleaned").map(([, f]) => f[3])).toEqual(["0", "3"]);
  });
});

describe("POST /queues/:queue/drain", () => {
  it("deletes waiting and prioritized jobs, delayed ones when asked, and answers how many", async () => {
    const { admin, prefix } = makeApi();
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    await queue.addBulk([
      { name: "a", data: {} },
      { name: "b", data: {}, opts: { priority: 2 } },
      { name: "c", data: {}, opts: { delay: 60_000 } },
    ]);
    expect((await admin("POST", "/queues/q/drain")).body).toEqual({ name: "q", delayed: false, drained: 2 });
    expect((await admin("POST", "/queues/q/drain", { json: { delayed: true } })).body).toEqual({
      name: "q",
      delayed: true,
      drained: 1,
    });
    expect(await queue.getJobCounts("wait", "prioritized", "delayed")).toEqual({
      wait: 0,
      prioritized: 0,
      delayed: 0,
    });
  });
});

describe("POST /queues/:queue/promote", () => {
  it("makes delayed jobs ready, answers how many, and kicks the worker", async () => {
    const kicked: string[] = [];
    const { admin, prefix } = makeApi({ kick: async (queue) => void kicked.push(queue) });
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    await queue.addBulk([1, 2, 3].map((i) => ({ name: "later", data: { i }, opts: { delay: 60_000 } })));
    const answer = await admin("POST", "/queues/q/promote", { json: { count: 2 } });
    expect(answer.body).toEqual({ name: "q", promoted: 2, more: true });
    expect((await admin("POST", "/queues/q/promote", { json: {} })).body).toEqual({
      name: "q",
      promoted: 1,
      more: false,
    });
    expect(await direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(["3", "2", "1"]);
    expect(kicked).toEqual(["q", "q"]);
  });
});

describe("the maintenance routes' refusals", () => {
  it("need an admin token and JSON bodies naming known fields; refused requests change nothing", async () => {
    const { call, admin, prefix } = makeApi();
    await failedJobs(prefix, "q", 2);
    await new Queue("q", { redis: sharedRedis(), prefix }).add("later", {}, { delay: 60_000 });
    const before = await redisPicture(direct, prefix);
    for (const route of ["retry", "clean", "drain", "promote"]) {
      expectError(await call("POST", `/queues/q/${route}`, { json: {} }), 403, "forbidden");
      expectError(await call("POST", `/queues/q/${route}`, { token: null }), 401, "unauthorized");
      expectError(await admin("GET", `/queues/q/${route}`), 405, "method_not_allowed");
      expectError(await admin("POST", `/queues/q/${route}`, { json: [1] }), 400, "invalid_request", "body");
      expectError(
        await admin("POST", `/queues/q/${route}`, { json: { everything: true } }),
        400,
        "invalid_request",
        "everything",
      );
      expectError(
        await admin("POST", `/queues/q/${route}`, {
          raw: "{",
          headers: { "content-type": "application/json" },
        }),
        400,
        "invalid_json",
      );
      expectError(await admin("POST", `/queues/bad:name/${route}`), 400, "invalid_request", "queue");
    }
    const bad: [string, unknown, string][] = [
      ["retry", { state: "active" }, "state"],
      ["retry", { count: 0 }, "count"],
      ["retry", { count: "5" }, "count"],
      ["clean", { state: "failed" }, "grace"],
      ["clean", { grace: -1, state: "failed" }, "grace"],
      ["clean", { grace: 0 }, "state"],
      ["clean", { grace: 0, state: "waiting-children" }, "state"],
      ["clean", { grace: 0, state: "failed", limit: 1.5 }, "limit"],
      ["drain", { delayed: "yes" }, "delayed"],
      ["promote", { count: -1 }, "count"],
    ];
    for (const [route, json, field] of bad) {
      expectError(await admin("POST", `/queues/q/${route}`, { json }), 400, "invalid_request", field);
    }
    expect(await redisPicture(direct, prefix)).toEqual(before);
  });

  it("answer 409 for removing a job scheduler's current iteration", async () => {
    const { admin, prefix } = makeApi();
    const queue = new Queue("q", { redis: sharedRedis(), prefix });
    const iteration = await queue.upsertJobScheduler("tick", { every: 60_000 });
    const answer = await admin("DELETE", `/queues/q/jobs/${iteration?.id}`);
    expectError(answer, 409, "wrong_state");
    expect(await direct.exists(`${prefix}:q:${iteration?.id}`)).toBe(1);
  });

  it("answer 404 for a queue outside the allow-list", async () => {
    const { admin } = makeApi({ queues: ["q"] });
    for (const route of ["retry", "clean", "drain", "promote"])
      expectError(await admin("POST", `/queues/other/${route}`, { json: {} }), 404, "unknown_queue");
  });

  it("are described in the OpenAPI document", () => {
    const paths = openApiDocument().paths as Record<string, { post?: { requestBody?: unknown } }>;
    for (const route of ["retry", "clean", "drain", "promote"])
      expect(paths[`/queues/{queue}/${route}`]?.post?.requestBody).toBeDefined();
  });
});
