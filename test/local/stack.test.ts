/**
 * The local stack end to end, over HTTP: the API, the sweeper on its timer, worker "Lambdas" with
 * real deadlines, and Bull Board reading the same redis-server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis } from "../../core/index.ts";
import { toRedisPort } from "../../core/redis/redis-port.ts";
import { type LocalStack, startLocalStack } from "../../infra/local/stack.ts";
import { leaseBatch } from "../support/worker-calls.ts";

let stack: LocalStack;
const lines: string[] = [];
beforeAll(async () => {
  stack = await startLocalStack({
    httpPort: 0,
    restPort: 0,
    tickMs: 1000,
    stalledInterval: 300,
    log: (source, line) => lines.push(`[${source}] ${line}`),
  });
});
afterAll(() => stack.stop());

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.apiToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("npm start's stack", () => {
  it("runs a job posted over HTTP: kick → worker → GET shows it completed, with progress", async () => {
    const posted = await api("POST", "/queues/report/jobs", { name: "monthly", data: { month: "2026-10" } });
    expect(posted.status).toBe(202);
    const id = posted.json.id as string;
    const job = await until(
      () => api("GET", `/queues/report/jobs/${id}`),
      (r) => r.json.state === "completed",
    );
    expect(job.json).toMatchObject({ state: "completed", progress: 100, returnvalue: { month: "2026-10" } });
  });

  it("fires a delayed job within a second of its due time", async () => {
    const posted = await api("POST", "/queues/report/jobs", {
      name: "later",
      data: {},
      opts: { delay: 1500 },
    });
    const id = posted.json.id as string;
    const job = await until(
      () => api("GET", `/queues/report/jobs/${id}`),
      (r) => r.json.state === "completed",
    );
    const due = (job.json.timestamp as number) + 1500;
    const lateness = (job.json.processedOn as number) - due;
    expect(lateness).toBeGreaterThanOrEqual(0);
    expect(lateness).toBeLessThan(1000);
  });

  it("loses nothing when a worker dies mid-batch: the sweeper recovers, another worker finishes", async () => {
    const ids: string[] = [];
    for (let n = 0; n < 3; n++)
      ids.push((await api("POST", "/queues/report/jobs", { name: "part", data: { n } })).json.id as string);
    const redis = createRedis({ url: stack.restUrl, token: stack.restToken });
    const dead = await leaseBatch(
      { port: toRedisPort(redis), prefix: "bull", queueName: "report", clock: Date.now },
      { token: "dead-worker:1", count: 10, leaseMs: 400, limiterMax: 0, limiterDuration: 0, workerName: "" },
    );
    const leasedByDead = dead.jobs.map((j) => j.id).filter((id) => ids.includes(id));
    const states = await until(
      () => Promise.all(ids.map(async (id) => (await api("GET", `/queues/report/jobs/${id}`)).json.state)),
      (all) => all.every((state) => state === "completed"),
      20_000,
    );
    if (states.some((s) => s !== "completed"))
      console.log(lines.filter((l) => l.startsWith("[lambda]")).join("\n"));
    expect(states).toEqual(["completed", "completed", "completed"]);
    for (const id of leasedByDead) {
      expect((await api("GET", `/queues/report/jobs/${id}`)).json.attemptsStarted).toBe(2);
    }
  });

  it("shows nimbusq's queues and jobs in Bull Board's API", async () => {
    const response = await fetch(`${stack.apiUrl}/admin/queues/api/queues`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { queues: { name: string; counts: Record<string, number> }[] };
    const names = body.queues.map((q) => q.name).sort();
    expect(names).toEqual(["email", "report"]);
    const report = body.queues.find((q) => q.name === "report");
    expect(report?.counts.completed).toBeGreaterThanOrEqual(4);
    expect(lines.some((line) => line.startsWith("[eventbridge] nimbusq.job.completed report#"))).toBe(true);
  });
});
