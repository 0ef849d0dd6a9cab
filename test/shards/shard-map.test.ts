/**
 * The shard map (issue 27, point 2): queues placed on two Upstash-like databases (two REST servers,
 * each on its own redis-server), Queue, Worker, QueueEvents and FlowProducer each talking to their
 * queue's database, and every link that would write across databases refused where it is configured.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRedis,
  createSweeper,
  FlowProducer,
  Queue,
  QueueEvents,
  ShardMap,
  ValidationError,
  Worker,
} from "../../core/index.ts";
import { keysUnder, type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let one: PrivateStack;
let two: PrivateStack;
let shards: ShardMap;
beforeAll(async () => {
  [one, two] = await Promise.all([startPrivateStack(), startPrivateStack()]);
  shards = new ShardMap({ databases: { one: one.redis, two: two.redis }, queues: { pinned: "two" } });
});
afterAll(async () => {
  await Promise.all([one?.stop(), two?.stop()]);
});

/** Queue names that the hash puts on `database`, `count` of them. */
function queuesOn(map: ShardMap, database: string, count: number, label: string): string[] {
  const names: string[] = [];
  for (let i = 0; names.length < count; i++)
    if (map.databaseOf(`${label}${i}`) === database) names.push(`${label}${i}`);
  return names;
}

describe("placement", () => {
  it("puts a pinned queue where the pin says and the others by a hash stable across maps", () => {
    expect(shards.databaseOf("pinned")).toBe("two");
    const again = new ShardMap({ databases: { two: two.redis, one: one.redis } });
    const names = Array.from({ length: 200 }, (_, i) => `queue-${i}`);
    expect(names.map((n) => again.databaseOf(n))).toEqual(names.map((n) => shards.databaseOf(n)));
    const onOne = names.filter((n) => shards.databaseOf(n) === "one").length;
    expect(onOne).toBeGreaterThan(60);
    expect(onOne).toBeLessThan(140);
  });

  it("moves only the queues that rank a new database first when one is added", () => {
    const three = new ShardMap({ databases: { one: one.redis, two: two.redis, three: one.redis } });
    const names = Array.from({ length: 300 }, (_, i) => `queue-${i}`);
    const moved = names.filter((n) => three.databaseOf(n) !== shards.databaseOf(n));
    expect(moved.every((n) => three.databaseOf(n) === "three")).toBe(true);
    expect(moved.length).toBeGreaterThan(50);
    expect(moved.length).toBeLessThan(150);
  });

  it("refuses bad maps, naming the field", () => {
    const bad = (options: unknown) => () => new ShardMap(options as never);
    expect(bad({ databases: {} })).toThrow(/databases must be an object naming at least one database/);
    expect(bad({ databases: { "Main-DB": one.redis } })).toThrow(
      /databases\.Main-DB must be named by lowercase/,
    );
    expect(bad({ databases: { one: {} } })).toThrow(/databases\.one must be a Redis client/);
    expect(bad({ databases: { one: one.redis }, queues: { email: "nope" } })).toThrow(
      /queues\.email must be one of the databases \(one\)/,
    );
    expect(bad({ databases: { one: one.redis }, queues: { "a:b": "one" } })).toThrow(ValidationError);
  });
});

describe("a queue's keys", () => {
  it("live on its database only, through Queue, Worker and QueueEvents", async () => {
    const prefix = uniquePrefix("shards");
    const onOne = queuesOn(shards, "one", 2, "q");
    const onTwo = [...queuesOn(shards, "two", 1, "q"), "pinned"];
    const all = [...onOne, ...onTwo];
    const events = new QueueEvents(onTwo[0] as string, { redis: shards, prefix, poll: { idleMs: 1000 } });
    const completed: string[] = [];
    events.on("completed", ({ jobId }) => completed.push(jobId));
    await events.waitUntilReady();
    for (const name of all) {
      await new Queue(name, { redis: shards, prefix }).addBulk([
        { name: "a", data: { n: 1 } },
        { name: "b", data: { n: 2 }, opts: { delay: 50 } },
      ]);
    }
    await new Promise((resolve) => setTimeout(resolve, 80));
    for (const name of all) {
      const worker = new Worker(name, async (job) => job.data, { redis: shards, prefix });
      const summary = await worker.drain();
      expect(summary.completed).toBe(2);
      await worker.close();
    }
    // Each database holds its queues' keys and its own per-prefix keys (attention index, guards).
    const queuesIn = async (stack: PrivateStack) => {
      const heads = (await keysUnder(stack.direct, prefix)).map(
        (key) => key.slice(prefix.length + 1).split(":")[0],
      );
      return [...new Set(heads)].filter((head) => head !== "nq" && head !== "nq-req").sort();
    };
    expect(await queuesIn(one)).toEqual([...onOne].sort());
    expect(await queuesIn(two)).toEqual([...onTwo].sort());
    for (let i = 0; i < 50 && completed.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(completed).toHaveLength(2);
    await events.close();
  });
});

describe("links across databases", () => {
  /** A queue on database one and one on database two. */
  const pair = () => [
    queuesOn(shards, "one", 1, "x")[0] as string,
    queuesOn(shards, "two", 1, "x")[0] as string,
  ];

  it("are refused for a flow's parent and child, naming the node", async () => {
    const [a, b] = pair() as [string, string];
    const prefix = uniquePrefix("shards-flows");
    const flows = new FlowProducer({ redis: shards, prefix });
    await expect(
      flows.add({ name: "parent", queueName: a, children: [{ name: "child", queueName: b }] }),
    ).rejects.toThrow(/children\[0\]\.queueName must be a queue on the same database as/);
    await expect(
      flows.addBulk([
        { name: "p", queueName: a },
        { name: "q", queueName: b },
      ]),
    ).rejects.toThrow(/flows\[1\]\.queueName must be a queue on the same database/);
    const same = queuesOn(shards, "one", 2, "y");
    const node = await flows.add({
      name: "p",
      queueName: same[0] as string,
      children: [{ name: "c", queueName: same[1] as string }],
    });
    expect(node.children?.[0]?.job.opts.parent).toMatchObject({ id: node.job.id });
    expect(await keysUnder(two.direct, prefix)).toEqual([]);
  });

  it("read the right way round for a flow's child, and are refused for redrive and job schedulers", async () => {
    const [a, b] = pair() as [string, string];
    const prefix = uniquePrefix("shards-more");
    const flows = new FlowProducer({ redis: shards, prefix });
    await expect(
      flows.add({ name: "p", queueName: a, children: [{ name: "c", queueName: b }] }),
    ).rejects.toThrow(
      new RegExp(
        `children\\[0\\]\\.queueName must be a queue on the same database as "${a}" \\(one\\), not "${b}" on two`,
      ),
    );
    expect(await flows.addBulk([])).toEqual([]);
    const queue = new Queue(a, { redis: shards, prefix });
    await expect(queue.redrive({ from: b })).rejects.toThrow(/from must be a queue on the same database/);
    await expect(
      queue.upsertJobScheduler("every", { every: 1000 }, { name: "x", opts: { deadLetter: { queue: b } } }),
    ).rejects.toThrow(/template\.opts\.deadLetter\.queue must be a queue on the same database/);
    expect(await keysUnder(one.direct, prefix)).toEqual([]);
  });

  it("are refused for a dead-letter queue, on the job and on the Worker", async () => {
    const [a, b] = pair() as [string, string];
    const prefix = uniquePrefix("shards-dlq");
    const queue = new Queue(a, { redis: shards, prefix });
    await expect(queue.add("x", {}, { deadLetter: { queue: b } })).rejects.toThrow(
      /opts\.deadLetter\.queue must be a queue on the same database as ".*" \(one\), not ".*" on two: pin both/,
    );
    await expect(queue.add("x", {}, { parent: { id: "1", queue: `${prefix}:${b}` } })).rejects.toThrow(
      /opts\.parent\.queue must be a queue on the same database/,
    );
    expect(() => new Worker(a, async () => {}, { redis: shards, prefix, deadLetter: { queue: b } })).toThrow(
      /Worker ".*": deadLetter\.queue must be a queue on the same database/,
    );
    expect(await keysUnder(one.direct, prefix)).toEqual([]);
  });
});

describe("the sweeper over a shard map", () => {
  it("reports a database whose loop failed beside the other's work, and adds up the invocations", async () => {
    const prefix = uniquePrefix("shards-sweep");
    const down = createRedis({ url: "http://127.0.0.1:9", token: "none", checkClock: false });
    const map = new ShardMap({
      databases: { one: one.redis, gone: down },
      queues: { up: "one", lost: "gone" },
    });
    await new Queue("up", { redis: map, prefix }).add("x", {});
    const started: string[] = [];
    const failed: unknown[] = [];
    const sweeper = createSweeper(
      {
        queues: [
          { name: "up", workerFunction: "up-worker" },
          { name: "lost", workerFunction: "lost-worker" },
        ],
        prefix,
        mode: "once",
        releaseLock: true,
        retry: { windowMs: 0 },
      },
      {
        connect: () => map,
        startWorkers: async (queue) => void started.push(queue.name),
        failed: (error) => void failed.push(error),
      },
    );
    const result = await sweeper.run({ token: "t", remainingMs: 5000 });
    expect(result.invoked).toEqual({ up: 1 });
    expect(started).toEqual(["up"]);
    expect(result.failures?.map((f) => [f.database, f.prefix])).toEqual([["gone", prefix]]);
    expect(failed.length).toBeGreaterThan(0);
  });
});
