/** Issue 11, point 11: unknown methods, CORS preflights, numbers JSON cannot carry, bounded admin bodies. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { describe, expect, it } from "vitest";
import { httpHandler, httpOptionsFromEnv } from "../../functions/http/index.ts";
import { apiGatewayV2Event, lambdaContext } from "../support/aws-events.ts";
import { adminToken, type CallInit, expectError, makeApi, userToken } from "../support/http-app.ts";
import { keyspaceDigest } from "../support/keyspace.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();
const context = lambdaContext({ functionName: "nimbusq-http" });
const auth = { authorization: `Bearer ${userToken}` };

describe("unknown methods answer 405 JSON with Allow", () => {
  it("through the app", async () => {
    const { call } = makeApi();
    for (const method of ["FOO", "PROPFIND", "PURGE"]) {
      const answer = await call(method, "/queues/q");
      expectError(answer, 405, "method_not_allowed");
      expect(answer.headers.get("allow")).toBe("GET, HEAD");
    }
  });

  it("under the Lambda handler, methods fetch refuses included", async () => {
    const prefix = uniquePrefix("l");
    const handler = httpHandler({ redis: sharedRedis(), prefix, tokens: [userToken], log: () => {} });
    for (const method of ["FOO", "TRACE", "CONNECT", "TRACK", "BAD METHOD"]) {
      const result = await handler(
        apiGatewayV2Event({ method, path: "/queues/q/jobs", headers: auth, body: "{}" }),
        context,
      );
      expect({ method, status: result.statusCode, allow: result.headers?.allow }).toEqual({
        method,
        status: 405,
        allow: "POST, GET, HEAD",
      });
      expect(JSON.parse(result.body ?? "").error.code).toBe("method_not_allowed");
    }
    expect(await keyspaceDigest(direct, prefix)).toBe(await keyspaceDigest(direct, `${prefix}-none`));
  });

  it("under the Node server", async () => {
    const { app } = makeApi();
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    const { port } = server.address() as AddressInfo;
    const ask = (method: string) =>
      new Promise<{ status?: number; allow?: string; type?: string; body: string }>((resolve, reject) => {
        const request = http.request({ host: "127.0.0.1", port, method, path: "/queues/q", headers: auth });
        request.on("response", (res) => {
          let body = "";
          res.on("data", (chunk) => {
            body += chunk;
          });
          res.on("end", () =>
            resolve({
              status: res.statusCode,
              allow: res.headers.allow,
              type: res.headers["content-type"],
              body,
            }),
          );
        });
        request.on("error", reject);
        request.end();
      });
    try {
      for (const method of ["TRACE", "PROPFIND", "SEARCH"]) {
        const answer = await ask(method);
        expect({ status: answer.status, allow: answer.allow, type: answer.type }).toEqual({
          status: 405,
          allow: "GET, HEAD",
          type: "application/json",
        });
        expect(JSON.parse(answer.body).error.code).toBe("method_not_allowed");
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("CORS", () => {
  const preflight = (origin: string, method = "POST"): CallInit => ({
    token: null,
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "authorization",
    },
  });

  it("is off by default: a preflight is just an unauthenticated OPTIONS", async () => {
    const { call } = makeApi();
    const answer = await call("OPTIONS", "/queues/q/jobs", preflight("https://app.example.com"));
    expectError(answer, 401, "unauthorized");
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers a preflight from an allowed origin, refuses others, and marks every answer", async () => {
    const { call, prefix } = makeApi({ cors: { origins: ["https://app.example.com"], maxAge: 120 } });
    const before = await keyspaceDigest(direct, prefix);
    const ok = await call("OPTIONS", "/queues/q/jobs", preflight("https://app.example.com"));
    expect(ok.status).toBe(204);
    expect(Object.fromEntries(ok.headers)).toMatchObject({
      "access-control-allow-origin": "https://app.example.com",
      "access-control-allow-methods": "POST, GET, HEAD",
      "access-control-allow-headers": "Authorization, Content-Type, Idempotency-Key",
      "access-control-max-age": "120",
      vary: "Origin",
    });
    const other = await call("OPTIONS", "/queues/q/jobs", preflight("https://evil.example.com"));
    expectError(other, 403, "forbidden");
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect(JSON.stringify(other.body)).not.toContain("evil");
    expect(await keyspaceDigest(direct, prefix)).toBe(before);
    const denied = await call("GET", "/queues/q", {
      token: null,
      headers: { origin: "https://app.example.com" },
    });
    expectError(denied, 401, "unauthorized");
    expect(denied.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const added = await call("POST", "/queues/q/jobs", {
      json: { name: "a" },
      headers: { origin: "https://app.example.com" },
    });
    expect(added.status).toBe(202);
    expect(added.headers.get("access-control-expose-headers")).toMatch(/Location/);
  });

  it("reads NIMBUSQ_CORS_ORIGINS and refuses a bad origin at start", () => {
    const env = {
      UPSTASH_REDIS_REST_URL: "http://127.0.0.1:1",
      UPSTASH_REDIS_REST_TOKEN: "t",
      NIMBUSQ_API_TOKENS: "a",
    };
    expect(httpOptionsFromEnv(env).cors).toBeUndefined();
    expect(
      httpOptionsFromEnv({ ...env, NIMBUSQ_CORS_ORIGINS: "https://a.example, http://localhost:5173" }).cors,
    ).toEqual({
      origins: ["https://a.example", "http://localhost:5173"],
    });
    expect(httpOptionsFromEnv({ ...env, NIMBUSQ_CORS_ORIGINS: "*" }).cors).toEqual({ origins: "*" });
    expect(() => makeApi({ cors: { origins: ["https://a.example/app"] } })).toThrow(/scheme:\/\/host/);
  });
});

describe("bodies refused with a 400 naming the field, Redis unchanged", () => {
  const cases: [string, string, string, CallInit, string][] = [
    ["1e400 in data", "POST", "/queues/q/jobs", { raw: '{"name":"a","data":{"n":1e400}}' }, "data.n"],
    [
      "-1e400 in a bulk",
      "POST",
      "/queues/q/jobs",
      { raw: '[{"name":"a"},{"name":"b","data":[1,-1e400]}]' },
      "[1].data[1]",
    ],
    [
      "1e400 as opts.delay",
      "POST",
      "/queues/q/jobs",
      { raw: '{"name":"a","opts":{"delay":1e400}}' },
      "opts.delay",
    ],
    [
      "promote count 1e12",
      "POST",
      "/queues/q/promote",
      { token: adminToken, json: { count: 1e12 } },
      "count",
    ],
    ["retry count 0", "POST", "/queues/q/retry", { token: adminToken, json: { count: 0 } }, "count"],
    [
      "clean limit 1e9",
      "POST",
      "/queues/q/clean",
      { token: adminToken, json: { grace: 0, state: "wait", limit: 1e9 } },
      "limit",
    ],
    [
      "an unknown promote field",
      "POST",
      "/queues/q/promote",
      { token: adminToken, json: { count: 1, all: true } },
      "all",
    ],
    [
      "an unknown pause field",
      "POST",
      "/queues/q/pause",
      { token: adminToken, json: { reason: "x" } },
      "reason",
    ],
    [
      "an unknown resume field",
      "POST",
      "/queues/q/resume",
      { token: adminToken, json: { force: true } },
      "force",
    ],
  ];
  for (const [label, method, path, init, errorField] of cases) {
    it(label, async () => {
      const { call, prefix } = makeApi();
      await call("POST", "/queues/q/jobs", { json: { name: "seed", opts: { delay: 60_000 } } });
      const before = await keyspaceDigest(direct, prefix);
      const raw = init.raw === undefined ? {} : { headers: { "content-type": "application/json" } };
      expectError(await call(method, path, { ...raw, ...init }), 400, "invalid_request", errorField);
      expect(await keyspaceDigest(direct, prefix)).toBe(before);
    });
  }

  it("still promotes with a count in bounds", async () => {
    const { call, admin } = makeApi();
    await call("POST", "/queues/q/jobs", { json: { name: "later", opts: { delay: 60_000 } } });
    const answer = await admin("POST", "/queues/q/promote", { json: { count: 100_000 } });
    expect(answer.body).toEqual({ name: "q", promoted: 1, more: false });
    expect((await admin("POST", "/queues/q/pause", { json: {} })).status).toBe(200);
  });
});
