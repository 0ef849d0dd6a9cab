import { describe, expect, it } from "vitest";
import { httpHandler, httpOptionsFromEnv } from "../../functions/http/index.ts";
import { apiGatewayV2Event, functionUrlEvent, lambdaContext } from "../support/aws-events.ts";
import { adminToken, userToken } from "../support/http-app.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

const context = lambdaContext({ functionName: "nimbusq-http", remainingMs: 29_000 });
const auth = (token = userToken) => ({ authorization: `Bearer ${token}` });

function makeHandler() {
  const prefix = uniquePrefix("l");
  const handler = httpHandler({
    redis: sharedRedis(),
    prefix,
    tokens: [{ token: userToken }, { token: adminToken, admin: true }],
    log: () => {},
  });
  return { prefix, handler };
}

const bodyOf = (result: { body?: string }) => JSON.parse(result.body ?? "null") as unknown;

describe("httpHandler behind API Gateway (HTTP API, payload 2.0)", () => {
  it("adds a job and answers a payload 2.0 result", async () => {
    const { handler, prefix } = makeHandler();
    const result = await handler(
      apiGatewayV2Event({
        method: "POST",
        path: "/queues/email/jobs",
        headers: { ...auth(), "idempotency-key": "signup-42" },
        body: { name: "welcome", data: { to: "a@example.com" } },
      }),
      context,
    );
    expect(result).toEqual({
      statusCode: 202,
      headers: expect.objectContaining({
        "content-type": "application/json",
        location: "/queues/email/jobs/signup-42",
      }),
      body: JSON.stringify({ id: "signup-42", state: "waiting", outcome: "created" }),
      isBase64Encoded: false,
    });
    expect(await direct.hget(`${prefix}:email:signup-42`, "data")).toBe('{"to":"a@example.com"}');
  });

  it("strips a named stage from the path, and reads query strings", async () => {
    const { handler } = makeHandler();
    const add = apiGatewayV2Event({
      stage: "prod",
      method: "POST",
      path: "/queues/q/jobs",
      headers: auth(),
      body: [{ name: "a" }, { name: "b" }],
    });
    expect(add.rawPath).toBe("/prod/queues/q/jobs");
    expect((await handler(add, context)).statusCode).toBe(202);
    const list = await handler(
      apiGatewayV2Event({
        stage: "prod",
        path: "/queues/q/jobs",
        headers: auth(),
        query: { state: "waiting", start: "0", end: "0", asc: "true" },
      }),
      context,
    );
    expect(bodyOf(list)).toMatchObject({ total: 2, jobs: [{ id: "1", name: "a" }] });
  });

  it("decodes base64 bodies and counts their real size against the limit", async () => {
    const prefix = uniquePrefix("l");
    const handler = httpHandler({ redis: sharedRedis(), prefix, tokens: [userToken], maxBodyBytes: 200 });
    const small = apiGatewayV2Event({
      method: "POST",
      path: "/queues/q/jobs",
      headers: auth(),
      body: { name: "grüße", data: { text: "ünïcödé" } },
      base64: true,
    });
    expect(small.isBase64Encoded).toBe(true);
    expect((await handler(small, context)).statusCode).toBe(202);
    expect(await direct.hget(`${prefix}:q:1`, "name")).toBe("grüße");
    const big = apiGatewayV2Event({
      method: "POST",
      path: "/queues/q/jobs",
      headers: { ...auth(), "content-length": "10" },
      body: { name: "x", data: "y".repeat(300) },
      base64: true,
    });
    const refused = await handler(big, context);
    expect(refused.statusCode).toBe(413);
    expect(bodyOf(refused)).toMatchObject({ error: { code: "payload_too_large" } });
  });

  it("answers errors in the same JSON shape, and 400 for what no request can carry", async () => {
    const { handler } = makeHandler();
    const unauthorized = await handler(apiGatewayV2Event({ path: "/queues/q" }), context);
    expect(unauthorized).toMatchObject({
      statusCode: 401,
      headers: { "www-authenticate": expect.any(String) },
    });
    expect(bodyOf(unauthorized)).toMatchObject({ error: { code: "unauthorized" } });
    const badBase64 = apiGatewayV2Event({
      method: "POST",
      path: "/queues/q/jobs",
      headers: auth(),
      body: "{}",
    });
    const broken = await handler({ ...badBase64, body: "%%%not base64", isBase64Encoded: true }, context);
    expect(broken.statusCode).toBe(400);
    expect(bodyOf(broken)).toMatchObject({ error: { code: "invalid_request" } });
  });

  it("ignores a body on GET, and passes cookies through without trouble", async () => {
    const { handler } = makeHandler();
    const event = apiGatewayV2Event({ path: "/queues/q", headers: auth(), cookies: ["session=abc"] });
    const result = await handler({ ...event, body: "ignored", isBase64Encoded: false }, context);
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toMatchObject({ name: "q", paused: false });
  });
});

describe("httpHandler behind a function URL", () => {
  it("serves every route from rawPath, admin ones included", async () => {
    const { handler, prefix } = makeHandler();
    const add = functionUrlEvent({
      method: "POST",
      path: "/queues/q/jobs",
      headers: auth(),
      body: { name: "a" },
    });
    expect(add.routeKey).toBe("$default");
    expect((await handler(add, context)).statusCode).toBe(202);
    const read = await handler(functionUrlEvent({ path: "/queues/q/jobs/1", headers: auth() }), context);
    expect(bodyOf(read)).toMatchObject({ id: "1", name: "a", state: "waiting", data: {} });
    const forbidden = await handler(
      functionUrlEvent({ method: "POST", path: "/queues/q/pause", headers: auth() }),
      context,
    );
    expect(forbidden.statusCode).toBe(403);
    const paused = await handler(
      functionUrlEvent({ method: "POST", path: "/queues/q/pause", headers: auth(adminToken) }),
      context,
    );
    expect(bodyOf(paused)).toEqual({ name: "q", paused: true });
    expect(await direct.hget(`${prefix}:q:meta`, "paused")).toBe("1");
    const spec = await handler(functionUrlEvent({ path: "/openapi.json" }), context);
    expect(bodyOf(spec)).toMatchObject({ openapi: "3.1.0" });
  });
});

describe("httpOptionsFromEnv", () => {
  const base = { UPSTASH_REDIS_REST_URL: "http://127.0.0.1:1", UPSTASH_REDIS_REST_TOKEN: "t" };

  it("reads tokens (admin: prefix or NIMBUSQ_ADMIN_TOKENS), queues, prefix and the body limit", () => {
    const options = httpOptionsFromEnv({
      ...base,
      NIMBUSQ_API_TOKENS: " alpha, admin:root ,,beta",
      NIMBUSQ_ADMIN_TOKENS: "ops",
      NIMBUSQ_QUEUES: "email, sms",
      NIMBUSQ_PREFIX: "prod",
      NIMBUSQ_MAX_BODY_BYTES: "65536",
    });
    expect(options).toMatchObject({
      tokens: [
        { token: "ops", admin: true },
        { token: "root", admin: true },
        { token: "alpha" },
        { token: "beta" },
      ],
      queues: ["email", "sms"],
      prefix: "prod",
      maxBodyBytes: 65536,
    });
    expect(options.redis).toBeDefined();
  });

  it("refuses a configuration without tokens, with a bad queue or a bad limit", () => {
    expect(() => httpOptionsFromEnv({ ...base, NIMBUSQ_API_TOKENS: " , " })).toThrow(/NIMBUSQ_API_TOKENS/);
    expect(() => httpOptionsFromEnv({ NIMBUSQ_API_TOKENS: "a" })).toThrow(/UPSTASH_REDIS_REST_URL/);
    expect(() =>
      httpOptionsFromEnv({ ...base, NIMBUSQ_API_TOKENS: "a", NIMBUSQ_MAX_BODY_BYTES: "1mb" }),
    ).toThrow(/NIMBUSQ_MAX_BODY_BYTES/);
    const badQueue = httpOptionsFromEnv({ ...base, NIMBUSQ_API_TOKENS: "a", NIMBUSQ_QUEUES: "a:b" });
    expect(() => httpHandler(badQueue)).toThrow(/queueName/);
  });
});
