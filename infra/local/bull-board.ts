/**
 * Bull Board, unchanged, at /admin/queues: it talks to the same redis-server over TCP through its
 * BullMQ adapter and shows nimbusq's queues because they are in BullMQ's layout.
 */
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { HonoAdapter } from "@bull-board/hono";
import { serveStatic } from "@hono/node-server/serve-static";
import { Queue } from "bullmq";
import { Hono } from "hono";

export const bullBoardPath = "/admin/queues";

export interface BullBoard {
  app: Hono;
  close(): Promise<void>;
}

export function createBoard(
  queueNames: string[],
  connection: { host: string; port: number },
  prefix = "bull",
): BullBoard {
  const queues = queueNames.map(
    (name) => new Queue(name, { connection: { ...connection, maxRetriesPerRequest: null }, prefix }),
  );
  const serverAdapter = new HonoAdapter(serveStatic);
  serverAdapter.setBasePath(bullBoardPath);
  createBullBoard({ queues: queues.map((queue) => new BullMQAdapter(queue)), serverAdapter });
  const app = new Hono();
  app.route(bullBoardPath, serverAdapter.registerPlugin());
  return { app, close: async () => void (await Promise.all(queues.map((queue) => queue.close()))) };
}
