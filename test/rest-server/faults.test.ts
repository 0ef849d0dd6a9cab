/**
 * Fault injection, observed through the real client: lost requests are retried, lost answers make the
 * client run a command again, 5xx answers surface as errors, and delays delay.
 */
import { errors } from "@upstash/redis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RestStack, startRestStack } from "../support/rest-server.ts";

let stack: RestStack;

beforeAll(async () => {
  stack = await startRestStack();
});

afterAll(async () => {
  await stack.stop();
});

afterEach(() => {
  stack.rest.setFault(null);
  stack.rest.resetStats();
});

describe("faults", () => {
  it("drop-after runs the command, loses the answer, and the client's retry runs it again", async () => {
    const redis = stack.client({ enableAutoPipelining: false });
    stack.rest.setFault({ kind: "drop-after", times: 2 });
    expect(await redis.incr("fault:drop")).toBe(3);
    expect(await stack.direct.get("fault:drop")).toBe("3");
    expect(stack.rest.stats().requests).toBe(3);
  });

  it("drop-after without a limit runs every attempt and ends in a network error", async () => {
    const redis = stack.client({ retry: { retries: 5, backoff: () => 5 } });
    stack.rest.setFault({ kind: "drop-after" });
    await expect(redis.rpush("fault:drops", "job-1")).rejects.toThrow(/fetch failed/);
    expect(await stack.direct.lrange("fault:drops", 0, -1)).toEqual(Array(6).fill("job-1"));
  });

  it("fail-before loses the request, and the client's retry runs it exactly once", async () => {
    const redis = stack.client({ enableAutoPipelining: false });
    stack.rest.setFault({ kind: "fail-before", times: 1 });
    expect(await redis.incr("fault:before")).toBe(1);
    expect(await stack.direct.get("fault:before")).toBe("1");
    expect(stack.rest.stats()).toMatchObject({ requests: 2, commands: 1 });
  });

  it("status-500 surfaces an UpstashError and runs nothing", async () => {
    const redis = stack.client({ enableAutoPipelining: false });
    stack.rest.setFault({ kind: "status-500", times: 1 });
    const failure = redis.set("fault:500", "v");
    await expect(failure).rejects.toBeInstanceOf(errors.UpstashError);
    await expect(failure).rejects.toThrow(/^ERR injected fault/);
    expect(await stack.direct.exists("fault:500")).toBe(0);
    expect(await redis.set("fault:500", "v")).toBe("OK");
  });

  it("status-503 answers HTML, which the client cannot parse, and runs nothing", async () => {
    const redis = stack.client();
    stack.rest.setFault({ kind: "status-503" });
    const failure = redis.set("fault:503", "v");
    await expect(failure).rejects.toBeInstanceOf(errors.UpstashJSONParseError);
    await expect(failure).rejects.toThrow(/^Unable to parse response body: <html>/);
    const raw = await stack.post("/", '["ping"]');
    expect(raw.status).toBe(503);
    expect(raw.headers.get("content-type")).toBe("text/html");
    expect(await stack.direct.exists("fault:503")).toBe(0);
  });

  it("delay waits before running", async () => {
    const redis = stack.client({ enableAutoPipelining: false });
    stack.rest.setFault({ kind: "delay", delayMs: 300, times: 1 });
    const started = performance.now();
    expect(await redis.incr("fault:delay")).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    const again = performance.now();
    await redis.incr("fault:delay");
    expect(performance.now() - again).toBeLessThan(250);
  });

  it("delay lets a client-side timeout fire while the command still runs on the server", async () => {
    const redis = stack.client({ enableAutoPipelining: false, signal: () => AbortSignal.timeout(50) });
    stack.rest.setFault({ kind: "delay", delayMs: 200, times: 1 });
    await expect(redis.incr("fault:timeout")).rejects.toMatchObject({ name: "TimeoutError" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await stack.direct.get("fault:timeout")).toBe("1");
  });

  it("limits a fault to requests containing a given command", async () => {
    const redis = stack.client({ enableAutoPipelining: false, retry: { retries: 0 } });
    const script = redis.createScript("return redis.call('INCR', KEYS[1])");
    stack.rest.setFault({ kind: "status-500", command: "EVALSHA" });
    expect(await redis.incr("fault:scoped")).toBe(1);
    await expect(script.exec(["fault:scoped"], [])).rejects.toThrow(/injected fault/);
    expect(await redis.eval("return redis.call('INCR', KEYS[1])", ["fault:scoped"], [])).toBe(2);
    stack.rest.setFault(null);
    expect(await script.exec(["fault:scoped"], [])).toBe(3);
  });

  it("is set and cleared through the admin route, which validates it", async () => {
    const set = await stack.post("/__nimbusq/fault", '{"kind":"status-500","times":1}');
    expect(await set.json()).toEqual({ result: "OK" });
    expect((await stack.post("/", '["ping"]')).status).toBe(500);
    expect((await stack.post("/", '["ping"]')).status).toBe(200);
    await stack.post("/__nimbusq/fault", '{"kind":"status-500"}');
    await stack.post("/__nimbusq/fault", "null");
    expect((await stack.post("/", '["ping"]')).status).toBe(200);
    for (const bad of [
      '{"kind":"explode"}',
      '{"kind":"delay"}',
      '{"kind":"status-500","times":0}',
      "[1]",
      "{",
    ]) {
      const response = await stack.post("/__nimbusq/fault", bad);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(/^ERR invalid fault/);
    }
  });
});
