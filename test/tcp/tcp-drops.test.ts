/**
 * A TcpRedis whose connections are cut (test/support/cutting-proxy.ts): plainly, half-way through a
 * reply, half-way through a command. Each call still gets its whole, right answer (core retries the
 * transient failure, ioredis reconnects), and the drops are not printed as ioredis's "Unhandled error
 * event" on stderr: the callers are told through their calls, a log line per drop is noise.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRedis, Queue } from "../../core/index.ts";
import { type RedisServer, startRedisServer } from "../../infra/redis-server.ts";
import { type CuttingProxy, startCuttingProxy } from "../support/cutting-proxy.ts";
import { uniquePrefix } from "../support/stack.ts";

let server: RedisServer;
let proxy: CuttingProxy;
beforeAll(async () => {
  server = await startRedisServer();
  proxy = await startCuttingProxy({ host: server.host, port: server.port });
});
afterAll(async () => {
  await proxy?.close();
  await server?.stop();
});

describe("a TcpRedis whose connections are cut", () => {
  it("answers every call whole after plain, mid-reply and mid-command cuts, and logs nothing of them", async () => {
    const printed = vi.spyOn(console, "error");
    const redis = createRedis({ url: proxy.url });
    const queue = new Queue("cut", { redis, prefix: uniquePrefix("cut") });
    // A job whose data is large enough that its reply comes in many chunks.
    const big = "x".repeat(256 * 1024);
    const job = await queue.add("big", { big });
    try {
      for (const mid of [undefined, "reply", "command"] as const) {
        const reading = queue.getJob(job.id);
        const cut = await proxy.cut(mid ? { mid } : {});
        expect(cut.plain + cut.midReply + cut.midCommand, `connections cut (${mid ?? "plain"})`).toBe(1);
        if (mid === "reply") expect(cut.midReply).toBe(1);
        expect((await reading)?.data).toEqual({ big });
        expect((await queue.add("after", { mid })).id).toBeTruthy();
      }
      expect(await queue.getJobCounts("waiting")).toEqual({ waiting: 4 });
      const unhandled = printed.mock.calls.filter((args) => String(args[0]).includes("Unhandled error"));
      expect(unhandled, "printed by ioredis").toEqual([]);
    } finally {
      printed.mockRestore();
      await redis.close();
    }
  });
});
