/**
 * The "over-tcp" and "over-cluster" projects' own check (vitest.config.ts): their suites really talk
 * TCP — the shared client is a TcpRedis and runs scripts against the run's redis-server (or cluster)
 * with no REST server between. In the REST project the same file checks the opposite. On the cluster,
 * the tests' prefixes are hash-tagged, so a queue's keys share one slot, and spread over every master.
 */
import { Redis as IORedis } from "ioredis";
import { describe, expect, inject, it } from "vitest";
import { Queue, TcpRedis } from "../../core/index.ts";
import { keySlot } from "../../infra/rest-server/key-slot.ts";
import { keysUnder, serverOf, sharedRedis, transport, uniquePrefix } from "../support/stack.ts";

describe("the shared client of this project", () => {
  it("is what NQ_TRANSPORT says, and works", async () => {
    const redis = sharedRedis();
    expect(redis instanceof TcpRedis).toBe(transport() !== "rest");
    const queue = new Queue("which", { redis, prefix: uniquePrefix("tcp") });
    await queue.add("a", {});
    expect(await queue.count("waiting")).toBe(1);
  });
});

describe.runIf(transport() === "cluster")("on the cluster", () => {
  it("a queue's keys share one slot, and the tests' prefixes land on every master", async () => {
    const redis = sharedRedis();
    const prefixes = Array.from({ length: 30 }, () => uniquePrefix("spread"));
    expect(prefixes.every((prefix) => /^\{[^{}]+\}$/.test(prefix))).toBe(true);
    for (const prefix of prefixes) {
      const queue = new Queue("q", { redis, prefix });
      await queue.add("a", {}, { delay: 60_000 });
      await queue.add("b", {});
    }
    const masters = inject("clusterNodes");
    const holders = new Map<string, number>();
    for (const { host, port } of masters) {
      const node = new IORedis({ host, port, lazyConnect: true });
      try {
        for (const prefix of prefixes) {
          const keys = await keysUnder(node, prefix);
          if (keys.length === 0) continue;
          // Every key of the prefix is on the master that serves its slot, and only there.
          expect(serverOf(prefix)).toEqual({ host, port });
          expect(new Set(keys.map((key) => keySlot(key)))).toEqual(new Set([keySlot(prefix)]));
          holders.set(`${host}:${port}`, (holders.get(`${host}:${port}`) ?? 0) + 1);
        }
      } finally {
        node.disconnect();
      }
    }
    expect([...holders.values()].reduce((a, b) => a + b, 0)).toBe(prefixes.length);
    expect(holders.size, JSON.stringify(Object.fromEntries(holders))).toBe(masters.length);
  });
});
