/**
 * The "over-tcp" project's own check (vitest.config.ts): its suites really talk TCP — the shared client
 * is a TcpRedis and runs scripts against the run's redis-server with no REST server between. In the
 * REST project the same file checks the opposite.
 */
import { describe, expect, it } from "vitest";
import { Queue, TcpRedis } from "../../core/index.ts";
import { sharedRedis, uniquePrefix } from "../support/stack.ts";

describe("the shared client of this project", () => {
  it("is what NQ_TRANSPORT says, and works", async () => {
    const redis = sharedRedis();
    expect(redis instanceof TcpRedis).toBe(process.env.NQ_TRANSPORT === "tcp");
    const queue = new Queue("which", { redis, prefix: uniquePrefix("tcp") });
    await queue.add("a", {});
    expect(await queue.count("waiting")).toBe(1);
  });
});
