/** Issue 11, points 8 and 9: no answer echoes a credential or header, and a reused Idempotency-Key with another body is refused. */
import { describe, expect, it } from "vitest";
import { httpHandler } from "../../functions/http/index.ts";
import { apiGatewayV2Event, lambdaContext } from "../support/aws-events.ts";
import { expectError, field, makeApi, userToken } from "../support/http-app.ts";
import { keyspaceDigest } from "../support/keyspace.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();
const secret = "s3cret-0f9e8d7c";
const context = lambdaContext({ functionName: "nimbusq-http" });

describe("malformed Authorization headers (point 8)", () => {
  const malformed = [`Bearer ${secret} extra`, `Bearer`, `Token ${secret}`, `Bearer  ${secret}\t,x`, secret];
  for (const header of malformed) {
    it(`answers 401 with a fixed message for ${JSON.stringify(header.replace(secret, "<secret>"))}`, async () => {
      const { call } = makeApi();
      const answer = await call("GET", "/queues/q", { token: null, headers: { authorization: header } });
      expectError(answer, 401, "unauthorized");
      expect(field(answer, "error", "message")).toBe("an Authorization: Bearer <token> header is required");
      expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer /);
      expect(JSON.stringify(answer.body)).not.toContain(secret);
    });
  }

  it("under Lambda, a header no Request can carry answers 401 without quoting it, Redis untouched", async () => {
    const prefix = uniquePrefix("l");
    const handler = httpHandler({ redis: sharedRedis(), prefix, tokens: [userToken], log: () => {} });
    const before = await keyspaceDigest(direct, prefix);
    for (const value of [`Bearer ${secret}\nX-Injected: 1`, `Bearer ${secret}\u0000`]) {
      const event = apiGatewayV2Event({
        method: "POST",
        path: "/queues/q/jobs",
        headers: { authorization: value },
        body: { name: "a" },
      });
      const result = await handler(event, context);
      expect(result.statusCode).toBe(401);
      expect(result.headers?.["www-authenticate"]).toMatch(/^Bearer /);
      expect(JSON.parse(result.body ?? "")).toEqual({
        error: { code: "unauthorized", message: "an Authorization: Bearer <token> header is required" },
      });
      expect(JSON.stringify(result)).not.toContain(secret);
    }
    const other = apiGatewayV2Event({
      path: "/queues/q",
      headers: { authorization: `Bearer ${userToken}`, "x-note": `${secret}\nX-Injected: 1` },
    });
    const refused = await handler(other, context);
    expect(refused.statusCode).toBe(400);
    expect(refused.body).not.toContain(secret);
    expect(JSON.parse(refused.body ?? "").error.message).toMatch(/x-note header/);
    const broken = await handler(
      {
        ...apiGatewayV2Event({
          method: "POST",
          path: "/queues/q/jobs",
          headers: { authorization: `Bearer ${userToken}` },
          body: "{}",
        }),
        body: `%${secret}`,
        isBase64Encoded: true,
      },
      context,
    );
    expect(broken.statusCode).toBe(400);
    expect(broken.body).not.toContain(secret);
    expect(await keyspaceDigest(direct, prefix)).toBe(before);
  });

  it("does not echo Content-Type or Idempotency-Key values either", async () => {
    const { call, prefix } = makeApi();
    const before = await keyspaceDigest(direct, prefix);
    const type = await call("POST", "/queues/q/jobs", {
      raw: '{"name":"a"}',
      headers: { "content-type": `text/plain; token=${secret}` },
    });
    expectError(type, 415, "unsupported_media_type", "Content-Type");
    const key = await call("POST", "/queues/q/jobs", {
      json: { name: "a" },
      headers: { "idempotency-key": `${secret}:lock` },
    });
    expectError(key, 400, "invalid_request", "Idempotency-Key");
    for (const answer of [type, key]) expect(JSON.stringify(answer.body)).not.toContain(secret);
    expect(await keyspaceDigest(direct, prefix)).toBe(before);
  });
});

describe("Idempotency-Key reuse (point 9)", () => {
  const keyed = (key: string, json: unknown) => ({ json, headers: { "idempotency-key": key } });

  it("answers the original job for the same body, in any key order, and 422 for another body", async () => {
    const { call, prefix } = makeApi({ defaultJobOptions: { attempts: 3 } });
    const body = { name: "welcome", data: { to: "a@example.com", n: 1 }, opts: { priority: 2, delay: 0 } };
    const first = await call("POST", "/queues/q/jobs", keyed("signup-1", body));
    expect(first.body).toEqual({ id: "signup-1", state: "prioritized", outcome: "created" });
    const reordered = {
      opts: { delay: 0, priority: 2 },
      data: { n: 1, to: "a@example.com" },
      name: "welcome",
    };
    const again = await call("POST", "/queues/q/jobs", keyed("signup-1", reordered));
    expect({ status: again.status, body: again.body }).toEqual({
      status: 202,
      body: { id: "signup-1", state: "prioritized", outcome: "duplicated" },
    });
    const before = await keyspaceDigest(direct, prefix);
    const variants = [
      { ...body, data: { to: "b@example.com", n: 1 } },
      { ...body, name: "goodbye" },
      { ...body, opts: { priority: 3 } },
      { name: "welcome", data: { to: "a@example.com", n: 1 } },
    ];
    for (const variant of variants) {
      const answer = await call("POST", "/queues/q/jobs", keyed("signup-1", variant));
      expectError(answer, 422, "idempotency_key_reused", "Idempotency-Key");
      expect(field(answer, "error", "message")).toMatch(/already used with another request/);
    }
    expect(await keyspaceDigest(direct, prefix)).toBe(before);
    expect(await direct.hget(`${prefix}:q:signup-1`, "data")).toBe('{"to":"a@example.com","n":1}');
  });

  it("compares every job of an array, and still adds what a fresh key names", async () => {
    const { call, admin, prefix } = makeApi();
    const jobs = [
      { name: "a", data: 1 },
      { name: "b", data: 2 },
    ];
    expect((await call("POST", "/queues/q/jobs", keyed("batch", jobs))).status).toBe(202);
    const same = await call("POST", "/queues/q/jobs", keyed("batch", jobs));
    expect(field(same, "jobs")).toEqual([
      { id: "batch-0", state: "waiting", outcome: "duplicated" },
      { id: "batch-1", state: "waiting", outcome: "duplicated" },
    ]);
    const before = await keyspaceDigest(direct, prefix);
    const changed = await call("POST", "/queues/q/jobs", keyed("batch", [jobs[0], { name: "b", data: 3 }]));
    expectError(changed, 422, "idempotency_key_reused", "Idempotency-Key");
    // An extra job under the same key is another request too.
    const longer = await call("POST", "/queues/q/jobs", keyed("batch", [...jobs, { name: "c" }]));
    expect(longer.status).toBe(202);
    expect(field(longer, "jobs", 2, "outcome")).toBe("created");
    const state = await direct.lrange(`${prefix}:q:wait`, 0, -1);
    expect(state).toEqual(["batch-2", "batch-1", "batch-0"]);
    expect(before).not.toBe(await keyspaceDigest(direct, prefix));
    // A job removed since is made again: the key names nothing any more.
    expect((await admin("DELETE", "/queues/q/jobs/batch-0")).status).toBe(200);
    const remade = await call("POST", "/queues/q/jobs", keyed("batch", [{ name: "z" }, jobs[1]]));
    expect(field(remade, "jobs", 0, "outcome")).toBe("created");
  });
});
