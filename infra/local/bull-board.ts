/**
 * Bull Board, unchanged, at /admin/queues: it talks to the same redis-server over TCP through its
 * BullMQ adapter and shows nimbusq's queues because they are in BullMQ's layout. It lists every queue
 * it finds under the prefix — dead-letter queues and queues made by other producers included — by a
 * SCAN at startup and again every `refreshMs`, instead of a fixed list.
 */
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { HonoAdapter } from "@bull-board/hono";
import { serveStatic } from "@hono/node-server/serve-static";
import { Queue } from "bullmq";
import { Hono } from "hono";
import { Redis as IORedis } from "ioredis";
import { defaultPrefix } from "../../core/index.ts";

export const bullBoardPath = "/admin/queues";

/** Keys that only a queue has (`<prefix>:<queue>:meta`, `:id`, `:wait`): a SCAN finds queues by them. */
const queueKeySuffixes = ["meta", "id", "wait"];
/** Bounds on one discovery: keys looked at (SCAN COUNT 1000 per call) and queues listed. */
const maxScannedKeys = 200_000;
const maxQueues = 500;

export interface BullBoard {
  app: Hono;
  /** Runs a discovery now (the timer runs one every `refreshMs`); resolves with the queues listed. */
  refresh(): Promise<string[]>;
  close(): Promise<void>;
}

export interface BoardOptions {
  prefix?: string;
  /** Queues listed even before any key of theirs exists (the demo queues). */
  queues?: string[];
  /** How often the queue list is discovered again (ms, default 10,000; 0: only at startup). */
  refreshMs?: number;
}

/** A glob that matches `text` literally in a SCAN MATCH. */
const globLiteral = (text: string) => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

/**
 * The queue names under `prefix`, from the keys only a queue has, sorted; at most `maxQueues`, after
 * at most `maxScannedKeys` keys looked at (a huge keyspace yields the queues found so far).
 */
export async function discoverQueues(redis: IORedis, prefix: string): Promise<string[]> {
  const found = new Set<string>();
  const head = `${prefix}:`;
  let cursor = "0";
  let scanned = 0;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${globLiteral(head)}*`, "COUNT", 1000);
    cursor = next;
    scanned += 1000;
    for (const key of keys) {
      const rest = key.slice(head.length);
      const colon = rest.indexOf(":");
      // A queue name holds no ":", so `<name>:<suffix>` has exactly one.
      if (colon <= 0 || rest.indexOf(":", colon + 1) !== -1) continue;
      if (queueKeySuffixes.includes(rest.slice(colon + 1))) found.add(rest.slice(0, colon));
    }
  } while (cursor !== "0" && scanned < maxScannedKeys && found.size < maxQueues);
  return [...found].sort().slice(0, maxQueues);
}

export function createBoard(
  connection: { host: string; port: number },
  options: BoardOptions = {},
): BullBoard {
  const prefix = options.prefix ?? defaultPrefix;
  const queueConnection = { ...connection, maxRetriesPerRequest: null };
  const scanner = new IORedis(queueConnection);
  const queues = new Map<string, Queue>();
  const serverAdapter = new HonoAdapter(serveStatic);
  serverAdapter.setBasePath(bullBoardPath);
  const board = createBullBoard({ queues: [], serverAdapter });
  const show = (names: Iterable<string>) => {
    for (const name of names) {
      if (!queues.has(name)) queues.set(name, new Queue(name, { connection: queueConnection, prefix }));
    }
    // Queues whose keys are gone (obliterated) stay listed until the process ends: harmless, empty.
    board.replaceQueues([...queues.values()].map((queue) => new BullMQAdapter(queue)));
  };
  show(options.queues ?? []);
  let closed = false;
  let running: Promise<string[]> | undefined;
  const refresh = () => {
    running ??= discoverQueues(scanner, prefix)
      .then((names) => {
        if (!closed) show(names);
        return [...queues.keys()].sort();
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const refreshMs = options.refreshMs ?? 10_000;
  const timer = refreshMs > 0 ? setInterval(() => void refresh().catch(() => {}), refreshMs) : undefined;
  timer?.unref();
  const app = new Hono();
  app.route(bullBoardPath, serverAdapter.registerPlugin());
  return {
    app,
    refresh,
    close: async () => {
      closed = true;
      clearInterval(timer);
      await running?.catch(() => {});
      await Promise.all([...queues.values()].map((queue) => queue.close()));
      scanner.disconnect();
    },
  };
}
