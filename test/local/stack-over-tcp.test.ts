/**
 * `npm start` over TCP (NIMBUSQ_LOCAL_TRANSPORT=tcp; issue 27): the HTTP API, the worker "Lambdas"
 * and the sweeper talk to redis-server with createRedis({ url: "redis://…" }), not through the REST
 * server, and Bull Board shows what they did.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../infra/local/stack.ts";

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ httpPort: 0, restPort: 0, tickMs: 1000, transport: "tcp", log: () => {} });
});
afterAll(() => stack.stop());

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.apiToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe("npm start's stack over TCP", () => {
  it("runs a posted job and a delayed one, and Bull Board lists them completed", async () => {
    const now = await api("POST", "/queues/report/jobs", { name: "monthly", data: { month: "2026-11" } });
    const later = await api("POST", "/queues/report/jobs", { name: "later", data: {}, opts: { delay: 500 } });
    expect([now.status, later.status]).toEqual([202, 202]);
    const state = async (id: unknown) => (await api("GET", `/queues/report/jobs/${id}`)).json.state;
    for (let i = 0; i < 300; i++) {
      if ((await state(now.json.id)) === "completed" && (await state(later.json.id)) === "completed") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect([await state(now.json.id), await state(later.json.id)]).toEqual(["completed", "completed"]);
    const board = await fetch(`${stack.apiUrl}/admin/queues/api/queues`);
    expect(board.status).toBe(200);
    const body = (await board.json()) as { queues: { name: string; counts: Record<string, number> }[] };
    expect(body.queues.find((q) => q.name === "report")?.counts.completed).toBeGreaterThanOrEqual(2);
  });
});
