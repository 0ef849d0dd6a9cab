/**
 * Issue 11, points 1–3, at the other doors a name comes in by: the HTTP API (400 JSON naming the
 * field and the rule, Redis unchanged: every key's DUMP), producer triggers (a bad queue name fails at
 * configuration; a bad id fails its record, not the batch) and the sweeper's queue list from env.
 */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../core/index.ts";
import { sweeperOptionsFromEnv } from "../../functions/config/sweeper-env.ts";
import { workersFromEnv } from "../../functions/config/workers-env.ts";
import { sqsProducer } from "../../functions/producers/index.ts";
import { lambdaContext, sqsEvent } from "../support/aws-events.ts";
import { adminToken, type CallInit, expectError, field, makeApi, redisPicture } from "../support/http-app.ts";
import { keyspaceDigest } from "../support/keyspace.ts";
import { directConnectionForFile, sharedRedis, silenceWarnings, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();
silenceWarnings();

const job = (opts: Record<string, unknown>) => ({ json: { name: "a", opts } });

/** [label, method, path, init, field, rule the message must state] */
const refused: [string, string, string, CallInit, string, RegExp][] = [
  ["jobId meta", "POST", "/queues/q/jobs", job({ jobId: "meta" }), "opts.jobId", /queue's own keys/],
  ["jobId wait", "POST", "/queues/q/jobs", job({ jobId: "wait" }), "opts.jobId", /queue's own keys/],
  [
    "jobId stalled-check",
    "POST",
    "/queues/q/jobs",
    job({ jobId: "stalled-check" }),
    "opts.jobId",
    /own keys/,
  ],
  ["jobId metrics", "POST", "/queues/q/jobs", job({ jobId: "metrics" }), "opts.jobId", /own keys/],
  ["jobId a:b:lock", "POST", "/queues/q/jobs", job({ jobId: "a:b:lock" }), "opts.jobId", /sub-key name/],
  ["jobId dl:email:1", "POST", "/queues/q/jobs", job({ jobId: "dl:email:1" }), "opts.jobId", /"dl:…"/],
  ["jobId repeat:s:1", "POST", "/queues/q/jobs", job({ jobId: "repeat:s:1" }), "opts.jobId", /"repeat:…"/],
  [
    "jobId metrics:completed:data",
    "POST",
    "/queues/q/jobs",
    job({ jobId: "metrics:completed:data" }),
    "opts.jobId",
    /"metrics:…"/,
  ],
  [
    "a reserved id in a bulk",
    "POST",
    "/queues/q/jobs",
    { json: [{ name: "ok" }, { name: "a", opts: { jobId: "de:x:y" } }] },
    "[1].opts.jobId",
    /"de:…"/,
  ],
  [
    "an Idempotency-Key in the dead-letter space",
    "POST",
    "/queues/q/jobs",
    { json: { name: "a" }, headers: { "idempotency-key": "dl:q:1" } },
    "Idempotency-Key",
    /"dl:…"/,
  ],
  [
    "an Idempotency-Key naming a queue key",
    "POST",
    "/queues/q/jobs",
    { json: { name: "a" }, headers: { "idempotency-key": "events" } },
    "Idempotency-Key",
    /own keys/,
  ],
  [
    "an Idempotency-Key with a control character (a tab)",
    "POST",
    "/queues/q/jobs",
    { json: { name: "a" }, headers: { "idempotency-key": "order\t7" } },
    "Idempotency-Key",
    /control|pattern|invalid|must be/,
  ],
  [
    "a job id with a right-to-left override",
    "POST",
    "/queues/q/jobs",
    job({ jobId: "invoice-\u202Efdp.exe" }),
    "opts.jobId",
    /zero-width or bidirectional|pattern|invalid/,
  ],
  ["a queue name with NUL", "POST", "/queues/a%00b/jobs", job({}), "queue", /control characters/],
  [
    "a queue name with a zero-width space",
    "POST",
    "/queues/a%E2%80%8Bb/jobs",
    job({}),
    "queue",
    /zero-width/,
  ],
  ["a queue name with CR/LF", "POST", "/queues/a%0D%0Ab/jobs", job({}), "queue", /control characters/],
  ["a queue name with /", "POST", "/queues/a%2Fb/jobs", job({}), "queue", /"\/"/],
  ["a queue name with *", "POST", "/queues/a*/jobs", job({}), "queue", /glob/],
  ["a queue name with ?", "POST", "/queues/a%3F/jobs", job({}), "queue", /glob/],
  ["a queue name with [", "POST", "/queues/a%5B1%5D/jobs", job({}), "queue", /glob/],
  ["a queue name with braces", "POST", "/queues/%7Bq%7D/jobs", job({}), "queue", /"\{" or "\}"/],
  ["the queue name nq", "POST", "/queues/nq/jobs", job({}), "queue", /"nq"/],
  ["a queue name of 201 bytes", "GET", `/queues/${"x".repeat(201)}`, {}, "queue", /200 bytes/],
  ["a queue name of 202 bytes", "GET", `/queues/${"%C3%A9".repeat(101)}`, {}, "queue", /200 bytes/],
  [
    "a job name of 1,001 bytes",
    "POST",
    "/queues/q/jobs",
    { json: { name: "x".repeat(1001) } },
    "name",
    /1000/,
  ],
  [
    "a dead-letter target with a glob",
    "POST",
    "/queues/q/jobs",
    job({ deadLetter: { queue: "dl*" } }),
    "opts.deadLetter.queue",
    /glob/,
  ],
  [
    "a redrive from a queue with /",
    "POST",
    "/queues/q/redrive",
    { token: adminToken, json: { deadLetterQueue: "a/b" } },
    "deadLetterQueue",
    /"\/"/,
  ],
];

describe("HTTP: names that reach into the keyspace answer 400 and write nothing", () => {
  for (const [label, method, path, init, errorField, rule] of refused) {
    it(`${label}: 400 naming ${errorField}`, async () => {
      const { call, prefix } = makeApi();
      await call("POST", "/queues/q/jobs", { json: { name: "seed" } });
      const before = await redisPicture(direct, prefix);
      const answer = await call(method, path, init);
      expectError(answer, 400, "invalid_request", errorField);
      expect(field<string>(answer, "error", "message")).toMatch(rule);
      expect(await redisPicture(direct, prefix)).toEqual(before);
    });
  }

  it("a path that normalizes away (/queues/../jobs) reaches no queue and writes nothing", async () => {
    const { call, prefix } = makeApi();
    await call("POST", "/queues/q/jobs", { json: { name: "seed" } });
    const before = await redisPicture(direct, prefix);
    for (const path of ["/queues/../jobs", "/queues/%2E%2E/jobs", "/queues/./jobs"]) {
      const answer = await call("POST", path, job({}));
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(answer.status, path).toBeLessThan(500);
    }
    expect(await redisPicture(direct, prefix)).toEqual(before);
  });

  it("accepts edge names: a 200-byte unicode queue, a 1,000-byte job name, ids near the rules", async () => {
    const { call, prefix } = makeApi();
    const queue = "é".repeat(100);
    const name = "名".repeat(333); // 999 bytes
    const added = await call("POST", `/queues/${encodeURIComponent(queue)}/jobs`, {
      json: { name, opts: { jobId: "a:lock:b" } },
    });
    expect(added.status).toBe(202);
    expect(await direct.hget(`${prefix}:${queue}:a:lock:b`, "name")).toBe(name);
    const read = await call("GET", `/queues/${encodeURIComponent(queue)}/jobs/a%3Alock%3Ab`);
    expect(field(read, "name")).toBe(name);
    const keyed = await call("POST", "/queues/q/jobs", {
      json: { name: "k" },
      headers: { "idempotency-key": "waiting" },
    });
    expect(field(keyed, "id")).toBe("waiting");
  });
});

describe("producers and the sweeper's queue list use the same queue-name rule", () => {
  it("a producer with a bad queue name fails when it is configured", () => {
    const map = () => ({ name: "n", data: {} });
    for (const queue of ["a/b", "a\nb", "q*", "x".repeat(201)]) {
      expect(() => sqsProducer({ queue, redis: sharedRedis(), map }), queue).toThrow(ValidationError);
      expect(() => sqsProducer({ queue, map }), queue).toThrow(/queueName must be/);
    }
  });

  it("a record whose id is reserved fails alone and writes nothing", async () => {
    const prefix = uniquePrefix();
    const handler = sqsProducer({
      queue: "email",
      redis: sharedRedis(),
      prefix,
      map: (record) => ({ name: "n", data: { body: record.body } }),
      jobId: (record) => (record.body === "bad" ? "dl:email:1" : `ok-${record.body}`),
    });
    const event = sqsEvent([{ body: "bad" }]);
    const before = await keyspaceDigest(direct, prefix);
    const result = await handler(event, lambdaContext());
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: event.Records[0]?.messageId }] });
    expect(await keyspaceDigest(direct, prefix)).toBe(before);
    const mixed = sqsEvent([{ body: "bad" }, { body: "good" }]);
    const second = await handler(mixed, lambdaContext());
    expect(second).toEqual({ batchItemFailures: [{ itemIdentifier: mixed.Records[0]?.messageId }] });
    expect(await direct.exists(`${prefix}:email:ok-good`)).toBe(1);
  });

  it("the sweeper's queue list refuses bad names, from either variable", () => {
    for (const name of ["a/b", "a*", "{q}", "nq", "é".repeat(101)]) {
      expect(() =>
        sweeperOptionsFromEnv({ NIMBUSQ_SWEEPER_CONFIG: JSON.stringify({ queues: [name] }) }),
      ).toThrow(/NIMBUSQ_SWEEPER_CONFIG\.queues\[0\]: queueName must be/);
      expect(() => workersFromEnv({ NIMBUSQ_WORKERS: `${name}:fn` })).toThrow(
        /NIMBUSQ_WORKERS\[0\].*queueName must be/,
      );
    }
  });
});
