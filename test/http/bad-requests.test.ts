import { describe, expect, it } from "vitest";
import { type ActiveJob, Worker } from "../../core/index.ts";
import { adminToken, type CallInit, expectError, field, makeApi, redisPicture } from "../support/http-app.ts";
import { directConnectionForFile, sharedRedis, startPrivateStack } from "../support/stack.ts";

const direct = directConnectionForFile();

type Case = [
  label: string,
  method: string,
  path: string,
  init: CallInit,
  status: number,
  code: string,
  field?: string,
];

const json = (value: unknown): CallInit => ({ json: value });
const raw = (body: string, type: string | null = "application/json"): CallInit => ({
  raw: body,
  ...(type === null ? {} : { headers: { "content-type": type } }),
});
const keyed = (key: string, value: unknown): CallInit => ({
  json: value,
  headers: { "idempotency-key": key },
});

const cases: Case[] = [
  ["invalid JSON", "POST", "/queues/q/jobs", raw('{"name": "a",'), 400, "invalid_json", "body"],
  [
    "invalid UTF-8",
    "POST",
    "/queues/q/jobs",
    { raw: new Uint8Array([0x7b, 0xff, 0x7d]), headers: { "content-type": "application/json" } },
    400,
    "invalid_json",
    "body",
  ],
  ["an empty body", "POST", "/queues/q/jobs", raw(""), 400, "invalid_json", "body"],
  ["a number for a body", "POST", "/queues/q/jobs", json(42), 400, "invalid_request", "body"],
  ["a null body", "POST", "/queues/q/jobs", raw("null"), 400, "invalid_request", "body"],
  ["a job without a name", "POST", "/queues/q/jobs", json({ data: {} }), 400, "invalid_request", "name"],
  ["a job with a number name", "POST", "/queues/q/jobs", json({ name: 7 }), 400, "invalid_request", "name"],
  [
    "an unknown job field",
    "POST",
    "/queues/q/jobs",
    json({ name: "a", options: {} }),
    400,
    "invalid_request",
    "options",
  ],
  [
    "opts that are not an object",
    "POST",
    "/queues/q/jobs",
    json({ name: "a", opts: [1] }),
    400,
    "invalid_request",
    "opts",
  ],
  [
    "a bad option",
    "POST",
    "/queues/q/jobs",
    json({ name: "a", opts: { priority: -1 } }),
    400,
    "invalid_request",
    "opts.priority",
  ],
  [
    "an unknown option",
    "POST",
    "/queues/q/jobs",
    json({ name: "a", opts: { repeat: { every: 5 } } }),
    400,
    "invalid_request",
    "opts.repeat",
  ],
  [
    "an integer custom id",
    "POST",
    "/queues/q/jobs",
    json({ name: "a", opts: { jobId: "12" } }),
    400,
    "invalid_request",
    "opts.jobId",
  ],
  [
    "a reserved custom id",
    "POST",
    "/queues/q/jobs",
    json({ name: "a", opts: { jobId: "meta" } }),
    400,
    "invalid_request",
    "opts.jobId",
  ],
  [
    "a bad option in an array",
    "POST",
    "/queues/q/jobs",
    json([{ name: "a" }, { name: "b", opts: { delay: -1 } }]),
    400,
    "invalid_request",
    "[1].opts.delay",
  ],
  [
    "a bad option in an array of one",
    "POST",
    "/queues/q/jobs",
    json([{ name: "a", opts: { attempts: "3" } }]),
    400,
    "invalid_request",
    "[0].opts.attempts",
  ],
  [
    "a non-object in an array",
    "POST",
    "/queues/q/jobs",
    json([{ name: "a" }, 5]),
    400,
    "invalid_request",
    "[1]",
  ],
  ["an empty array", "POST", "/queues/q/jobs", json([]), 400, "invalid_request", "body"],
  [
    "1,001 jobs",
    "POST",
    "/queues/q/jobs",
    json(Array.from({ length: 1001 }, () => ({ name: "x" }))),
    400,
    "invalid_request",
    "body",
  ],
  [
    "data over 512 KB",
    "POST",
    "/queues/q/jobs",
    json({ name: "a", data: "x".repeat(600_000) }),
    400,
    "invalid_request",
    "data",
  ],
  [
    "a parent that does not exist",
    "POST",
    "/queues/q/jobs",
    json({ name: "a", opts: { parent: { id: "nope", queue: "bull:q" } } }),
    400,
    "parent_not_found",
    "opts.parent",
  ],
  [
    "an integer Idempotency-Key",
    "POST",
    "/queues/q/jobs",
    keyed("123", { name: "a" }),
    400,
    "invalid_request",
    "Idempotency-Key",
  ],
  [
    "an Idempotency-Key with one colon",
    "POST",
    "/queues/q/jobs",
    keyed("a:b", [{ name: "a" }]),
    400,
    "invalid_request",
    "Idempotency-Key",
  ],
  [
    "a reserved Idempotency-Key",
    "POST",
    "/queues/q/jobs",
    keyed("wait", { name: "a" }),
    400,
    "invalid_request",
    "Idempotency-Key",
  ],
  [
    "an Idempotency-Key against opts.jobId",
    "POST",
    "/queues/q/jobs",
    keyed("k-1", { name: "a", opts: { jobId: "k-2" } }),
    400,
    "invalid_request",
    "Idempotency-Key",
  ],
  [
    "a text body",
    "POST",
    "/queues/q/jobs",
    raw('{"name":"a"}', "text/plain"),
    415,
    "unsupported_media_type",
    "Content-Type",
  ],
  [
    "no content type",
    "POST",
    "/queues/q/jobs",
    raw('{"name":"a"}', null),
    415,
    "unsupported_media_type",
    "Content-Type",
  ],
  [
    "a queue name with a colon",
    "POST",
    "/queues/a%3Ab/jobs",
    json({ name: "a" }),
    400,
    "invalid_request",
    "queue",
  ],
  ["a queue name over 200 bytes", "GET", `/queues/${"q".repeat(201)}`, {}, 400, "invalid_request", "queue"],
  ["no list state", "GET", "/queues/q/jobs", {}, 400, "invalid_request", "state"],
  ["an unknown list state", "GET", "/queues/q/jobs?state=done", {}, 400, "invalid_request", "state"],
  ["a negative start", "GET", "/queues/q/jobs?state=failed&start=-1", {}, 400, "invalid_request", "start"],
  ["a fractional end", "GET", "/queues/q/jobs?state=failed&end=1.5", {}, 400, "invalid_request", "end"],
  ["end before start", "GET", "/queues/q/jobs?state=failed&start=5&end=4", {}, 400, "invalid_request", "end"],
  [
    "a page over 1,000",
    "GET",
    "/queues/q/jobs?state=failed&start=0&end=1000",
    {},
    400,
    "invalid_request",
    "end",
  ],
  [
    "asc that is not a boolean",
    "GET",
    "/queues/q/jobs?state=failed&asc=maybe",
    {},
    400,
    "invalid_request",
    "asc",
  ],
  [
    "a retry from an unfinished state",
    "POST",
    "/queues/q/jobs/1/retry",
    { token: adminToken, json: { state: "active" } },
    400,
    "invalid_request",
    "state",
  ],
  [
    "an unknown retry field",
    "POST",
    "/queues/q/jobs/1/retry",
    { token: adminToken, json: { force: true } },
    400,
    "invalid_request",
    "force",
  ],
  [
    "a text body on pause",
    "POST",
    "/queues/q/pause",
    { token: adminToken, ...raw("now", "text/plain") },
    415,
    "unsupported_media_type",
  ],
  ["no token", "GET", "/queues/q", { token: null }, 401, "unauthorized"],
  ["a wrong token", "GET", "/queues/q", { token: "user-7c1e0b9b" }, 401, "unauthorized"],
  [
    "a Basic header",
    "GET",
    "/queues/q",
    { token: null, headers: { authorization: "Basic dXNlcjpwYXNz" } },
    401,
    "unauthorized",
  ],
  ["a user token on pause", "POST", "/queues/q/pause", {}, 403, "forbidden"],
  ["a user token on resume", "POST", "/queues/q/resume", {}, 403, "forbidden"],
  ["a user token on retry", "POST", "/queues/q/jobs/1/retry", {}, 403, "forbidden"],
  ["a user token on delete", "DELETE", "/queues/q/jobs/1", {}, 403, "forbidden"],
  ["an unknown route", "GET", "/nope", {}, 404, "not_found"],
  ["an unknown sub-route", "GET", "/queues/q/jobs/1/logs", {}, 404, "not_found"],
  ["an unknown job", "GET", "/queues/q/jobs/999", {}, 404, "job_not_found"],
  ["a queue key as a job id", "GET", "/queues/q/jobs/meta", {}, 404, "job_not_found"],
  ["a job's sub-key as a job id", "GET", "/queues/q/jobs/1%3Alock", {}, 404, "job_not_found"],
  [
    "a retry of an unknown job",
    "POST",
    "/queues/q/jobs/999/retry",
    { token: adminToken },
    404,
    "job_not_found",
  ],
  ["a delete of an unknown job", "DELETE", "/queues/q/jobs/999", { token: adminToken }, 404, "job_not_found"],
  ["a retry of a waiting job", "POST", "/queues/q/jobs/1/retry", { token: adminToken }, 409, "wrong_state"],
  ["PUT on jobs", "PUT", "/queues/q/jobs", json({ name: "a" }), 405, "method_not_allowed"],
  ["DELETE on a queue", "DELETE", "/queues/q", {}, 405, "method_not_allowed"],
  ["GET on pause", "GET", "/queues/q/pause", {}, 405, "method_not_allowed"],
  ["PATCH on a job", "PATCH", "/queues/q/jobs/1", json({}), 405, "method_not_allowed"],
  // Strict paths, as Hono's default router: a trailing slash is another path, and none is served.
  ["a POST to jobs/ (trailing slash)", "POST", "/queues/q/jobs/", json({ name: "a" }), 404, "not_found"],
  ["a GET of a queue/ (trailing slash)", "GET", "/queues/q/", {}, 404, "not_found"],
];

describe("bad requests", () => {
  for (const [label, method, path, init, status, code, errorField] of cases) {
    it(`${label}: ${status} ${code}${errorField ? ` naming ${errorField}` : ""}, Redis unchanged`, async () => {
      const { call, prefix } = makeApi();
      await call("POST", "/queues/q/jobs", { json: { name: "seed" } });
      const before = await redisPicture(direct, prefix);
      const answer = await call(method, path, init);
      expectError(answer, status, code, errorField);
      expect(await redisPicture(direct, prefix)).toEqual(before);
    });
  }

  it("says which methods a path allows", async () => {
    const { call } = makeApi();
    expect((await call("DELETE", "/queues/q")).headers.get("allow")).toBe("GET, HEAD");
    expect((await call("GET", "/queues/q/jobs/1/retry")).headers.get("allow")).toBe("POST");
    expect((await call("POST", "/openapi.json", { token: null })).status).toBe(405);
  });

  it("asks for a bearer token on 401", async () => {
    const { call } = makeApi();
    expect((await call("GET", "/queues/q", { token: null })).headers.get("www-authenticate")).toMatch(
      /^Bearer/,
    );
    expect((await call("GET", "/queues/q", { token: "nope" })).headers.get("www-authenticate")).toMatch(
      /invalid_token/,
    );
  });

  it("refuses a queue outside the allow-list with 404, but serves the listed ones", async () => {
    const { call, prefix } = makeApi({ queues: ["email", "sms"] });
    const answer = await call("POST", "/queues/push/jobs", { json: { name: "a" } });
    expectError(answer, 404, "unknown_queue");
    expect(field(answer, "error", "message")).toBe('unknown queue "push"');
    expect((await call("GET", "/queues/push/jobs/1")).status).toBe(404);
    expect((await call("POST", "/queues/sms/jobs", { json: { name: "a" } })).status).toBe(202);
    expect(Object.keys(await redisPicture(direct, prefix)).some((key) => key.includes(":push:"))).toBe(false);
  });

  it("answers 413 over the size limit, from Content-Length or from the bytes that arrive", async () => {
    const { call, prefix } = makeApi({ maxBodyBytes: 1000 });
    const big = JSON.stringify({ name: "a", data: "x".repeat(1000) });
    const declared = await call("POST", "/queues/q/jobs", {
      raw: big,
      headers: { "content-type": "application/json", "content-length": String(big.length) },
    });
    expectError(declared, 413, "payload_too_large");
    const chunks = [big.slice(0, 600), big.slice(600)].map((part) => new TextEncoder().encode(part));
    const streamed = await call("POST", "/queues/q/jobs", {
      raw: new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      }),
      headers: { "content-type": "application/json" },
    });
    expectError(streamed, 413, "payload_too_large");
    expect(await redisPicture(direct, prefix)).toEqual({});
    const fits = JSON.stringify({ name: "a", data: "x".repeat(900) });
    expect(
      (await call("POST", "/queues/q/jobs", { raw: fits, headers: { "content-type": "application/json" } }))
        .status,
    ).toBe(202);
  });

  it("answers 409 when a worker holds the job being removed, which then stays", async () => {
    const { call, admin, prefix } = makeApi();
    await call("POST", "/queues/q/jobs", { json: { name: "slow" } });
    let release = () => {};
    let started = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const worker = new Worker(
      "q",
      (_job: ActiveJob) =>
        new Promise((resolve) => {
          release = () => resolve("done");
          started();
        }),
      { redis: sharedRedis(), prefix },
    );
    const drained = worker.drain();
    await running;
    expectError(await admin("DELETE", "/queues/q/jobs/1"), 409, "job_locked");
    release();
    await drained;
    expect(field(await call("GET", "/queues/q/jobs/1"), "state")).toBe("completed");
  });
});

describe("server faults", () => {
  it("a Redis that stays down answers 503 retry_later with Retry-After, and logs the cause", async () => {
    const stack = await startPrivateStack();
    try {
      const { call, logged } = makeApi({ redis: stack.redis, retry: { windowMs: 300 } });
      stack.rest.setFault({ kind: "status-500" });
      const answer = await call("GET", "/queues/q");
      expectError(answer, 503, "retry_later");
      expect(answer.headers.get("retry-after")).toBe("1");
      expect(logged).toHaveLength(1);
      expect(logged[0]?.message).toMatch(/GET \/queues\/q failed/);
    } finally {
      stack.rest.setFault(null);
      await stack.stop();
    }
  });

  it("a final Redis error answers 500 with nothing but 'internal error', and logs the cause", async () => {
    const stack = await startPrivateStack();
    try {
      const prefix = "h-final";
      // The queue's meta is not a hash: every read of it is refused, which no retry changes.
      await stack.direct.set(`${prefix}:q:meta`, "not a hash");
      const { call, logged } = makeApi({ redis: stack.redis, prefix });
      const answer = await call("GET", "/queues/q");
      expectError(answer, 500, "internal");
      expect(answer.body).toEqual({ error: { code: "internal", message: "internal error" } });
      expect(logged).toHaveLength(1);
      expect(String((logged[0]?.error as Error | undefined)?.message)).toMatch(
        /\(final, wrong-type\): WRONGTYPE/,
      );
    } finally {
      await stack.stop();
    }
  });

  it("one 500 in the middle of a request is retried and the request succeeds, adding the job once", async () => {
    const stack = await startPrivateStack();
    try {
      const prefix = "h-once";
      const { call } = makeApi({ redis: stack.redis, prefix });
      stack.rest.setFault({ kind: "status-500", command: "evalsha", times: 1 });
      const answer = await call("POST", "/queues/q/jobs", { json: { name: "n", data: { a: 1 } } });
      expect(answer.status).toBe(202);
      expect(await stack.direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual([field(answer, "id")]);
    } finally {
      stack.rest.setFault(null);
      await stack.stop();
    }
  });
});
