/**
 * Bull Board lists every queue it finds under the prefix (issue 12, point 7), found by a SCAN for the
 * keys only a queue has, at startup and on each refresh: a dead-letter queue that appears after the
 * board started is listed at the next refresh. Real redis-server, real Bull Board API routes.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Queue, Worker } from "../../core/index.ts";
import { createBoard, discoverQueues } from "../../infra/local/bull-board.ts";
import {
  directConnectionForFile,
  sharedConnectionOptions,
  sharedRedis,
  uniquePrefix,
} from "../support/stack.ts";

const direct = directConnectionForFile();
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

async function boardQueues(board: ReturnType<typeof createBoard>): Promise<string[]> {
  const response = await board.app.request("/admin/queues/api/queues");
  expect(response.status).toBe(200);
  const body = (await response.json()) as { queues: { name: string }[] };
  return body.queues.map((q) => q.name).sort();
}

describe("Bull Board's queue discovery", () => {
  it("finds queues by their meta, id or wait key, and nothing else under the prefix", async () => {
    const prefix = uniquePrefix("bb");
    await direct.hset(`${prefix}:has-meta:meta`, "opts.maxLenEvents", "10000");
    await direct.set(`${prefix}:has-id:id`, "3");
    await direct.rpush(`${prefix}:has-wait:wait`, "1");
    // Not queues: a job hash, nimbusq's registry and replay guard, another prefix's queue.
    await direct.hset(`${prefix}:has-id:1`, "name", "n");
    await direct.zadd(`${prefix}:ghost:nq:workers`, 1, "w");
    await direct.set(`${prefix}:nq-req:ghost:token`, "1");
    await direct.set(`${prefix}x:other:id`, "1");
    expect(await discoverQueues(direct, prefix)).toEqual(["has-id", "has-meta", "has-wait"]);
  });

  it("lists a dead-letter queue that appears after the board started", async () => {
    const prefix = uniquePrefix("bb");
    const redis = sharedRedis();
    const source = new Queue("mail", { redis, prefix });
    await source.add("send", { to: "bounce@example.com" });
    const board = createBoard(sharedConnectionOptions(), { prefix, queues: ["listed"], refreshMs: 0 });
    closers.push(() => board.close());
    expect(await board.refresh()).toEqual(["listed", "mail"]);
    expect(await boardQueues(board)).toEqual(["listed", "mail"]);

    const worker = new Worker(
      "mail",
      async () => {
        throw new Error("550 mailbox unavailable");
      },
      { redis, prefix, deadLetter: { queue: "mail-dlq" } },
    );
    await worker.drain();
    await worker.close();
    expect(await direct.exists(`${prefix}:mail-dlq:wait`)).toBe(1);
    expect(await boardQueues(board)).toEqual(["listed", "mail"]);
    expect(await board.refresh()).toEqual(["listed", "mail", "mail-dlq"]);
    const response = await board.app.request("/admin/queues/api/queues");
    const body = (await response.json()) as { queues: { name: string; counts: Record<string, number> }[] };
    expect(body.queues.find((q) => q.name === "mail-dlq")?.counts.waiting).toBe(1);
  });

  it("refreshes on its timer", async () => {
    const prefix = uniquePrefix("bb");
    const board = createBoard(sharedConnectionOptions(), { prefix, refreshMs: 100 });
    closers.push(() => board.close());
    expect(await boardQueues(board)).toEqual([]);
    await direct.set(`${prefix}:late:id`, "1");
    const end = Date.now() + 5000;
    while ((await boardQueues(board)).length === 0 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 50));
    expect(await boardQueues(board)).toEqual(["late"]);
  });
});
