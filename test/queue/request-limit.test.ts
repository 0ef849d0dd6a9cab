/**
 * Bulk adds stay under Upstash's request limit (10,000,000 bytes) by splitting into several calls,
 * however the data grows on the way (quotes escaped a second time in the request body).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../core/index.ts";
import { createRedis } from "../../core/redis/client.ts";
import { requestLimitBytes } from "../../core/redis/redis-port.ts";
import { type RedisServer, startRedisServer } from "../../infra/redis-server.ts";
import { type RestServer, startRestServer } from "../../infra/rest-server/server.ts";
import { uniquePrefix } from "../support/stack.ts";

let redisServer: RedisServer;
let rest: RestServer;
beforeAll(async () => {
  redisServer = await startRedisServer();
  rest = await startRestServer({
    redis: { host: redisServer.host, port: redisServer.port },
    token: "limit",
    maxBodyBytes: requestLimitBytes,
  });
});
afterAll(async () => {
  await rest.close();
  await redisServer.stop();
});

describe("the request limit", () => {
  it("an addBulk of 24 MB of escaped data goes out in several calls, each under 10,000,000 bytes", async () => {
    expect(requestLimitBytes).toBe(10_000_000);
    const redis = createRedis({ url: rest.url, token: rest.token });
    const queue = new Queue("q", { redis, prefix: uniquePrefix(), maxDataBytes: 1_000_000 });
    // 400,000 quotes: 800,011 bytes of JSON data, 1,600,000+ once the request escapes it again.
    const data = { text: '"'.repeat(400_000) };
    rest.resetStats();
    const jobs = await queue.addBulk(Array.from({ length: 15 }, (_, n) => ({ name: `big-${n}`, data })));
    expect(jobs.map((job) => job.id)).toEqual(Array.from({ length: 15 }, (_, n) => String(n + 1)));
    expect(rest.stats().requests).toBeGreaterThanOrEqual(3);
    expect(await queue.count("wait")).toBe(15);
  });
});
