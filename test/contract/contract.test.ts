/**
 * Issue 17, point 3: the document is a contract the real app keeps. Every operation is called with
 * valid and invalid input (the real app over the test run's REST server and redis-server), and every
 * answer is checked against `/openapi.json` with ajv: its status must be documented for the operation,
 * its body must match that status's schema (error codes included), and the headers the document
 * requires must be there. Request bodies are checked too: the document must accept what the server
 * accepts and refuse what it refuses, except for the few rules only core can check (marked). The
 * document also lints clean with Redocly's recommended rules, warnings explained below.
 */
import { createConfig, lintFromString } from "@redocly/openapi-core";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { type ActiveJob, Worker } from "../../core/index.ts";
import { type Answer, adminToken, type CallInit, makeApi } from "../support/http-app.ts";
import { sharedRedis } from "../support/stack.ts";

/** Redocly warnings the document keeps, each with why. Errors are never allowed. */
const allowedWarnings: Record<string, string> = {
  "no-server-example.com":
    "the default server is the local stack (npm start) at http://localhost:3000, on purpose: a deployment sets NIMBUSQ_API_URL or createHttpApp's servers, and the document then names it",
};

type Method = "get" | "post" | "delete" | "put";
interface Operation {
  operationId: string;
  security?: Record<string, string[]>[];
  requestBody?: { content: { "application/json": { schema: object } } };
  responses: Record<string, { headers?: Record<string, { required?: boolean }>; content?: object }>;
}
interface Doc {
  paths: Record<string, Partial<Record<Method, Operation>>>;
}

/** [operationId, label, method, path, request, expected status, a rule the schema cannot state?] */
type Case = [string, string, Method, string, CallInit & { app?: "listed" | "small" }, number, "core"?];

const admin = (init: CallInit = {}): CallInit => ({ token: adminToken, ...init });
const text = (body: string): CallInit => ({ raw: body, headers: { "content-type": "text/plain" } });
const options = {
  jobId: "c-1",
  attempts: 3,
  backoff: { type: "exponential", delay: 1000 },
  priority: 2,
  removeOnComplete: { age: 3600 },
  deadLetter: { queue: "q-dlq" },
};

const cases: Case[] = [
  [
    "addJobs",
    "one job with options",
    "post",
    "/queues/q/jobs",
    { json: { name: "a", data: 1, opts: options } },
    202,
  ],
  ["addJobs", "a null body", "post", "/queues/q/jobs", { json: null }, 400],
  [
    "addJobs",
    "an array",
    "post",
    "/queues/q/jobs",
    { json: [{ name: "b" }, { name: "c", opts: { delay: 60_000 } }] },
    202,
  ],
  [
    "addJobs",
    "a keyed add",
    "post",
    "/queues/q/jobs",
    { json: { name: "k" }, headers: { "idempotency-key": "k-1" } },
    202,
  ],
  [
    "addJobs",
    "the same keyed add",
    "post",
    "/queues/q/jobs",
    { json: { name: "k" }, headers: { "idempotency-key": "k-1" } },
    202,
  ],
  [
    "addJobs",
    "the key with another body",
    "post",
    "/queues/q/jobs",
    { json: { name: "other" }, headers: { "idempotency-key": "k-1" } },
    422,
  ],
  [
    "addJobs",
    "an integer key",
    "post",
    "/queues/q/jobs",
    { json: { name: "k" }, headers: { "idempotency-key": "123" } },
    400,
  ],
  [
    "addJobs",
    "a priority out of range",
    "post",
    "/queues/q/jobs",
    { json: { name: "a", opts: { priority: -1 } } },
    400,
  ],
  [
    "addJobs",
    "a misspelt option",
    "post",
    "/queues/q/jobs",
    { json: { name: "a", opts: { attemps: 3 } } },
    400,
  ],
  [
    "addJobs",
    "a reserved job id",
    "post",
    "/queues/q/jobs",
    { json: { name: "a", opts: { jobId: "meta" } } },
    400,
  ],
  ["addJobs", "an unknown job field", "post", "/queues/q/jobs", { json: { name: "a", options: {} } }, 400],
  ["addJobs", "an empty array", "post", "/queues/q/jobs", { json: [] }, 400],
  [
    "addJobs",
    "data over 512 KB",
    "post",
    "/queues/q/jobs",
    { json: { name: "a", data: "x".repeat(600_000) } },
    400,
    "core",
  ],
  [
    "addJobs",
    "a parent that does not exist",
    "post",
    "/queues/q/jobs",
    { json: { name: "a", opts: { parent: { id: "nope", queue: "bull:q" } } } },
    400,
    "core",
  ],
  ["addJobs", "a text body", "post", "/queues/q/jobs", text('{"name":"a"}'), 415],
  [
    "addJobs",
    "a body over the limit",
    "post",
    "/queues/q/jobs",
    { app: "small", json: { name: "a", data: "x".repeat(2000) } },
    413,
  ],
  ["addJobs", "no token", "post", "/queues/q/jobs", { token: null, json: { name: "a" } }, 401],
  [
    "addJobs",
    "a queue outside the allow-list",
    "post",
    "/queues/other/jobs",
    { app: "listed", json: { name: "a" } },
    404,
  ],
  ["addJobs", "PUT on the path", "put", "/queues/q/jobs", { json: { name: "a" } }, 405],
  ["listJobs", "a page", "get", "/queues/q/jobs?state=waiting&start=0&end=5&asc=true", {}, 200],
  ["listJobs", "the default page", "get", "/queues/q/jobs?state=prioritized", {}, 200],
  ["listJobs", "end before start", "get", "/queues/q/jobs?state=waiting&start=5&end=4", {}, 400],
  ["listJobs", "no state", "get", "/queues/q/jobs", {}, 400],
  ["getJob", "a job", "get", "/queues/q/jobs/c-1", {}, 200],
  ["getJob", "a job with wait", "get", "/queues/q/jobs/c-1?wait=20", {}, 200],
  ["getJob", "a wait too long", "get", "/queues/q/jobs/c-1?wait=30000", {}, 400],
  ["getJob", "an unknown job", "get", "/queues/q/jobs/nope", {}, 404],
  ["getJob", "a queue key as a job id", "get", "/queues/q/jobs/meta", {}, 404],
  [
    "retryJob",
    "a failed job",
    "post",
    "/queues/f/jobs/f-1/retry",
    admin({ json: { resetAttemptsMade: true } }),
    200,
  ],
  ["retryJob", "a waiting job", "post", "/queues/q/jobs/c-1/retry", admin(), 409],
  [
    "retryJob",
    "an unfinished state",
    "post",
    "/queues/q/jobs/c-1/retry",
    admin({ json: { state: "active" } }),
    400,
  ],
  ["retryJob", "a text body", "post", "/queues/q/jobs/c-1/retry", admin(text("now")), 415],
  ["retryJob", "a user token", "post", "/queues/q/jobs/c-1/retry", {}, 403],
  [
    "cancelJob",
    "a waiting job",
    "post",
    "/queues/x/jobs/x-1/cancel",
    admin({ json: { reason: "stop" } }),
    200,
  ],
  ["cancelJob", "a job it failed", "post", "/queues/x/jobs/x-1/cancel", admin(), 409],
  ["cancelJob", "an unknown job", "post", "/queues/x/jobs/nope/cancel", admin(), 404],
  [
    "cancelJob",
    "a reason too long",
    "post",
    "/queues/x/jobs/x-1/cancel",
    admin({ json: { reason: "x".repeat(1001) } }),
    400,
  ],
  ["cancelJob", "an unknown field", "post", "/queues/x/jobs/x-1/cancel", admin({ json: { why: "" } }), 400],
  ["cancelJob", "a user token", "post", "/queues/x/jobs/x-1/cancel", {}, 403],
  ["removeJob", "a user token", "delete", "/queues/q/jobs/c-1", {}, 403],
  ["removeJob", "a job", "delete", "/queues/q/jobs/c-1", admin(), 200],
  ["removeJob", "an unknown job", "delete", "/queues/q/jobs/c-1", admin(), 404],
  ["getQueue", "a queue", "get", "/queues/q", {}, 200],
  ["getQueue", "a name with a colon", "get", "/queues/a%3Ab", {}, 400],
  ["pauseQueue", "no body", "post", "/queues/q/pause", admin(), 200],
  ["pauseQueue", "a field", "post", "/queues/q/pause", admin({ json: { now: true } }), 400],
  ["pauseQueue", "a null body", "post", "/queues/q/pause", admin({ json: null }), 400],
  ["pauseQueue", "a user token", "post", "/queues/q/pause", {}, 403],
  ["resumeQueue", "{}", "post", "/queues/q/resume", admin({ json: {} }), 200],
  ["resumeQueue", "a text body", "post", "/queues/q/resume", admin(text("go")), 415],
  ["listGroups", "a queue's groups", "get", "/queues/q/groups", {}, 200],
  ["listGroups", "a negative start", "get", "/queues/q/groups?start=-1", {}, 400],
  ["pauseGroup", "a group", "post", "/queues/q/groups/tenant-1/pause", admin(), 200],
  ["pauseGroup", "a user token", "post", "/queues/q/groups/tenant-1/pause", {}, 403],
  ["resumeGroup", "a group", "post", "/queues/q/groups/tenant-1/resume", admin(), 200],
  ["resumeGroup", "a group id with a colon", "post", "/queues/q/groups/a%3Ab/resume", admin(), 400],
  ["redriveDeadLetters", "a count", "post", "/queues/q/redrive", admin({ json: { count: 10 } }), 200],
  ["redriveDeadLetters", "a count of 0", "post", "/queues/q/redrive", admin({ json: { count: 0 } }), 400],
  [
    "redriveDeadLetters",
    "from itself",
    "post",
    "/queues/q/redrive",
    admin({ json: { deadLetterQueue: "q" } }),
    400,
    "core",
  ],
  ["retryJobs", "failed jobs", "post", "/queues/q/retry", admin({ json: { state: "failed" } }), 200],
  ["retryJobs", "a count of 0", "post", "/queues/q/retry", admin({ json: { count: 0 } }), 400],
  [
    "cleanJobs",
    "old completed jobs",
    "post",
    "/queues/q/clean",
    admin({ json: { grace: 0, state: "completed" } }),
    200,
  ],
  ["cleanJobs", "no grace", "post", "/queues/q/clean", admin({ json: { state: "failed" } }), 400],
  ["drainQueue", "with delayed", "post", "/queues/q/drain", admin({ json: { delayed: true } }), 200],
  ["drainQueue", "delayed as text", "post", "/queues/q/drain", admin({ json: { delayed: "yes" } }), 400],
  ["promoteJobs", "no body", "post", "/queues/q/promote", admin(), 200],
  ["promoteJobs", "a negative count", "post", "/queues/q/promote", admin({ json: { count: -1 } }), 400],
  ["getOpenApiDocument", "no token", "get", "/openapi.json", { token: null }, 200],
  ["getOpenApiDocument", "POST", "post", "/openapi.json", { token: null }, 405],
];

const main = makeApi();
const apps = { listed: makeApi({ queues: ["q"] }), small: makeApi({ maxBodyBytes: 1000 }), main };
let doc: Doc;
let ajv: Ajv2020;

/** The document's operation for a request: its path template matched by shape. */
function operationOf(operationId: string): { path: string; method: Method; operation: Operation } {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item) as [Method, Operation][]) {
      if (operation.operationId === operationId) return { path, method, operation };
    }
  }
  throw new Error(`no operation ${operationId}`);
}

const pointer = (...steps: string[]) =>
  `doc#${steps.map((s) => `/${encodeURIComponent(s.replace(/~/g, "~0").replace(/\//g, "~1"))}`).join("")}`;

function schemaErrors(ref: string, value: unknown): string | undefined {
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}

/** What in an answer breaks the document (empty when nothing does). */
function violations(operationId: string, answer: Answer): string[] {
  const { path, method, operation } = operationOf(operationId);
  const documented = operation.responses[String(answer.status)];
  if (!documented) return [`status ${answer.status} is not documented`];
  const found: string[] = [];
  for (const [name, header] of Object.entries(documented.headers ?? {}))
    if (header.required && !answer.headers.has(name)) found.push(`header ${name} missing`);
  if (!answer.headers.get("content-type")?.startsWith("application/json")) found.push("not JSON");
  const ref = pointer(
    "paths",
    path,
    method,
    "responses",
    String(answer.status),
    "content",
    "application/json",
    "schema",
  );
  const wrong = schemaErrors(ref, answer.body);
  if (wrong) found.push(`body: ${wrong}`);
  return found;
}

beforeAll(async () => {
  doc = (await main.call("GET", "/openapi.json", { token: null })).body as Doc;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc as object, "doc");
  // A waiting job for cancelJob.
  await main.call("POST", "/queues/x/jobs", {
    json: { name: "later", opts: { jobId: "x-1", delay: 60_000 } },
  });
  // A failed job for retryJob.
  await main.call("POST", "/queues/f/jobs", { json: { name: "doomed", opts: { jobId: "f-1" } } });
  const fail = async (_job: ActiveJob) => Promise.reject(new Error("no"));
  await new Worker("f", fail, { redis: sharedRedis(), prefix: main.prefix }).drain();
});

describe("the HTTP contract", () => {
  it("every answer to valid and invalid requests matches the document", async () => {
    const found: string[] = [];
    const exercised = new Map<string, Set<number>>();
    for (const [operationId, label, method, path, init, status, beyond] of cases) {
      const { app, ...request } = init;
      const answer = await apps[app ?? "main"].call(method.toUpperCase(), path, request);
      const where = `${operationId} (${label}): ${method.toUpperCase()} ${path} → ${answer.status}`;
      if (answer.status !== status) found.push(`${where}: expected ${status}`);
      for (const problem of violations(operationId, answer)) found.push(`${where}: ${problem}`);
      exercised.set(operationId, (exercised.get(operationId) ?? new Set()).add(answer.status));
      // The request body: the document and the server agree on it, save for core-only rules.
      const { path: template, method: verb, operation } = operationOf(operationId);
      if (request.json !== undefined && operation.requestBody && method === verb) {
        const ref = pointer("paths", template, verb, "requestBody", "content", "application/json", "schema");
        const schemaSays = schemaErrors(ref, request.json) === undefined;
        const bodyAtFault =
          answer.status === 400 &&
          !beyond &&
          !/field":"(queue|Idempotency-Key|deadLetterQueue)"/.test(JSON.stringify(answer.body));
        if (answer.status < 300 && !schemaSays)
          found.push(`${where}: the document refuses a body the server took`);
        if (bodyAtFault && schemaSays) found.push(`${where}: the document accepts a body the server refused`);
      }
    }
    expect(found).toEqual([]);
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
    expect(exercised.size).toBe(operations.length);
    for (const [operationId, statuses] of exercised) {
      expect(
        [...statuses].some((s) => s < 300),
        `${operationId} succeeded`,
      ).toBe(true);
      expect(
        [...statuses].some((s) => s >= 400),
        `${operationId} refused`,
      ).toBe(true);
    }
    console.info(
      `contract: ${operations.length} operations, ${cases.length} requests, ${found.length} violations`,
    );
  });

  it("marks exactly the operations that need an admin token, and each answers a user token 403", async () => {
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
    const adminOnly = operations
      .filter((op) => op.security?.some((s) => "adminToken" in s))
      .map((op) => op.operationId);
    expect(adminOnly.sort()).toEqual(
      [
        "cancelJob",
        "cleanJobs",
        "drainQueue",
        "pauseGroup",
        "pauseQueue",
        "promoteJobs",
        "redriveDeadLetters",
        "removeJob",
        "resumeGroup",
        "resumeQueue",
        "retryJob",
        "retryJobs",
      ].sort(),
    );
    for (const operationId of adminOnly) {
      const [, , method, path, init] = cases.find(
        ([id, , , , , status]) => id === operationId && status < 300,
      ) as Case;
      const answer = await main.call(method.toUpperCase(), path, { ...init, token: undefined });
      expect(answer.status, operationId).toBe(403);
      expect(violations(operationId, answer), operationId).toEqual([]);
    }
  });

  it("the check itself catches what breaks the document", () => {
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
      status,
      body,
      headers: new Headers({ "content-type": "application/json", ...headers }),
    });
    const error = (code: string) => ({ error: { code, message: "m" } });
    expect(violations("addJobs", answer(202, { id: 7 }))).toHaveLength(1);
    expect(violations("getQueue", answer(409, error("wrong_state")))).toEqual([
      "status 409 is not documented",
    ]);
    expect(violations("getQueue", answer(404, error("job_not_found")))).toHaveLength(1);
    expect(violations("getJob", answer(404, error("job_not_found")))).toEqual([]);
    expect(violations("getQueue", answer(401, error("unauthorized")))).toEqual([
      "header WWW-Authenticate missing",
    ]);
  });

  it("lints with Redocly's recommended rules: no error, and only the warnings explained above", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({
      source: JSON.stringify(doc),
      absoluteRef: "openapi.json",
      config,
    });
    const shown = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`);
    expect(shown.filter((p) => p.startsWith("error"))).toEqual([]);
    expect(problems.filter((p) => !(p.ruleId in allowedWarnings)).map((p) => p.ruleId)).toEqual([]);
  });

  it("types every job option with its range and closes opts, and documents the headers", () => {
    const schemas = (doc as unknown as { components: { schemas: Record<string, Record<string, unknown>> } })
      .components.schemas;
    const opts = schemas.JobOptions as { additionalProperties: boolean; properties: Record<string, object> };
    expect(opts.additionalProperties).toBe(false);
    expect(opts.properties.priority).toMatchObject({ type: "integer", minimum: 0, maximum: 2_097_151 });
    expect(Object.keys(opts.properties)).toHaveLength(21);
    const add = operationOf("addJobs").operation;
    expect(Object.keys(add.responses)).toEqual([
      "202",
      "400",
      "401",
      "404",
      "405",
      "409",
      "413",
      "415",
      "422",
      "500",
      "503",
    ]);
    expect(add.responses["202"]?.headers).toHaveProperty("Location");
    expect(operationOf("getQueue").operation.responses["401"]?.headers).toHaveProperty("WWW-Authenticate");
    expect(operationOf("pauseQueue").operation.responses["405"]?.headers).toHaveProperty("Allow");
    expect(Object.keys(operationOf("resumeQueue").operation.responses)).toEqual(
      expect.arrayContaining(["413", "415"]),
    );
  });
});
