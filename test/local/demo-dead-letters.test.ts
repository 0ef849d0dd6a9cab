/**
 * The demo's dead letters on the local stack (issue 12, point 7), as the README's npm start section
 * shows them: a curl'd email to bounce@… gets the email queue's own defaults over HTTP (3 attempts),
 * fails for good, lands in email-dlq, which the API serves and Bull Board lists once it appears.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../infra/local/stack.ts";

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ httpPort: 0, restPort: 0, tickMs: 1000, log: () => {} });
});
afterAll(() => stack.stop());

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.apiToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

async function boardQueues(): Promise<{ name: string; counts: Record<string, number> }[]> {
  const response = await fetch(`${stack.apiUrl}/admin/queues/api/queues`);
  return ((await response.json()) as { queues: { name: string; counts: Record<string, number> }[] }).queues;
}

describe("npm start's dead-letter queue", () => {
  it("retries a bounced email with the queue's defaults, then shows it in email-dlq and Bull Board", async () => {
    expect((await boardQueues()).map((q) => q.name).sort()).toEqual(["email", "report"]);
    const added = await api("POST", "/queues/email/jobs", {
      name: "welcome",
      data: { to: "bounce@example.com" },
    });
    const end = Date.now() + 20_000;
    let counts: Record<string, number> = {};
    while (Date.now() < end) {
      counts = (await api("GET", "/queues/email-dlq")).counts as Record<string, number>;
      if (counts.waiting === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(counts.waiting).toBe(1);
    const job = await api("GET", `/queues/email/jobs/${added.id}`);
    expect(job).toMatchObject({ state: "failed", attemptsMade: 3 });
    expect(job.failedReason).toContain("550");
    let listed = await boardQueues();
    while (!listed.some((q) => q.name === "email-dlq") && Date.now() < end + 5000) {
      await new Promise((r) => setTimeout(r, 200));
      listed = await boardQueues();
    }
    expect(listed.find((q) => q.name === "email-dlq")?.counts.waiting).toBe(1);
    const redriven = await api("POST", "/queues/email/redrive");
    expect(redriven).toMatchObject({ redriven: 1, deadLetterQueue: "email-dlq" });
  }, 40_000);
});
