/** `POST /queues/:queue/redrive`: admin only, checked body, the DLQ under the allow-list, and a kick. */
import { describe, expect, it } from "vitest";
import { Worker } from "../../core/index.ts";
import { expectError, field, makeApi } from "../support/http-app.ts";
import { sharedRedis } from "../support/stack.ts";

async function failInto(
  prefix: string,
  queue: string,
  dlq: string,
  n: number,
  call: ReturnType<typeof makeApi>["call"],
) {
  const jobs = Array.from({ length: n }, (_, i) => ({
    name: "j",
    data: { i },
    opts: { deadLetter: { queue: dlq } },
  }));
  const added = await call("POST", `/queues/${queue}/jobs`, { json: jobs });
  expect(added.status).toBe(202);
  const worker = new Worker(
    queue,
    async () => {
      throw new Error("nope");
    },
    { redis: sharedRedis(), prefix },
  );
  await worker.drain();
}

describe("POST /queues/:queue/redrive", () => {
  it("moves the dead letters of <queue>-dlq back, at most count, and kicks the queue's worker", async () => {
    const kicks: string[] = [];
    const { prefix, call, admin } = makeApi({ kick: async (queue) => void kicks.push(queue) });
    await failInto(prefix, "email", "email-dlq", 3, call);
    kicks.length = 0;
    const first = await admin("POST", "/queues/email/redrive", { json: { count: 2 } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      name: "email",
      deadLetterQueue: "email-dlq",
      redriven: 2,
      jobs: [
        { id: "4", deadLetterId: "dl:email:1" },
        { id: "5", deadLetterId: "dl:email:2" },
      ],
      more: true,
    });
    expect(kicks).toEqual(["email"]);
    const rest = await admin("POST", "/queues/email/redrive");
    expect(field(rest, "redriven")).toBe(1);
    const none = await admin("POST", "/queues/email/redrive", { json: {} });
    expect(field(none, "redriven")).toBe(0);
    expect(kicks).toEqual(["email", "email"]);
    const job = await call("GET", "/queues/email/jobs/6");
    expect(field(job, "state")).toBe("waiting");
    expect(field(job, "data")).toEqual({ i: 2 });
  });

  it("reads the named dead-letter queue", async () => {
    const { prefix, call, admin } = makeApi();
    await failInto(prefix, "sms", "graveyard", 1, call);
    const answer = await admin("POST", "/queues/sms/redrive", { json: { deadLetterQueue: "graveyard" } });
    expect(field(answer, "redriven")).toBe(1);
    expect(field(answer, "deadLetterQueue")).toBe("graveyard");
  });

  it("refuses non-admins, bad bodies, and a dead-letter queue off the allow-list", async () => {
    const { admin, call } = makeApi({ queues: ["email", "email-dlq"] });
    expectError(await call("POST", "/queues/email/redrive"), 403, "forbidden");
    expectError(
      await admin("POST", "/queues/email/redrive", { json: { count: 0 } }),
      400,
      "invalid_request",
      "count",
    );
    expectError(
      await admin("POST", "/queues/email/redrive", { json: { count: 10_001 } }),
      400,
      "invalid_request",
      "count",
    );
    expectError(
      await admin("POST", "/queues/email/redrive", { json: { other: 1 } }),
      400,
      "invalid_request",
      "other",
    );
    expectError(await admin("POST", "/queues/email/redrive", { json: [1] }), 400, "invalid_request", "body");
    expectError(
      await admin("POST", "/queues/email/redrive", { json: { deadLetterQueue: "a:b" } }),
      400,
      "invalid_request",
      "deadLetterQueue",
    );
    expectError(
      await admin("POST", "/queues/email/redrive", { json: { deadLetterQueue: "email" } }),
      400,
      "invalid_request",
      "deadLetterQueue",
    );
    expectError(
      await admin("POST", "/queues/email/redrive", { json: { deadLetterQueue: "elsewhere" } }),
      404,
      "unknown_queue",
      "deadLetterQueue",
    );
    expectError(await admin("POST", "/queues/other/redrive"), 404, "unknown_queue");
    expectError(await admin("GET", "/queues/email/redrive"), 405, "method_not_allowed");
    expect((await admin("POST", "/queues/email/redrive")).status).toBe(200);
  });
});
