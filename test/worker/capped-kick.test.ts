/**
 * The HTTP API's kick honours maxWorkers (issue 12, point 6): it reads the queue's worker registry
 * (one script call) and sends no Invoke when the queue already has its maximum of running workers.
 * Real AWS SDK Lambda client against the local recorder, real REST server and redis-server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toRedisPort } from "../../core/index.ts";
import { trackWorkerInvocation } from "../../core/worker/worker-registry.ts";
import { createLambdaInvoker } from "../../functions/aws/lambda-invoker.ts";
import { workerKickFromEnv } from "../../functions/config/workers-env.ts";
import { createHttpApp } from "../../functions/http/index.ts";
import { sqsProducer } from "../../functions/producers/index.ts";
import { lambdaContext, sqsEvent } from "../support/aws-events.ts";
import { type AwsRecorder, startAwsRecorder } from "../support/aws-recorder.ts";
import { type PrivateStack, startPrivateStack, uniquePrefix } from "../support/stack.ts";

let recorder: AwsRecorder;
let stack: PrivateStack;

beforeAll(async () => {
  recorder = await startAwsRecorder();
  stack = await startPrivateStack();
});
afterAll(async () => {
  await recorder.close();
  await stack.stop();
});

function api(prefix: string, workers: string) {
  const kick = workerKickFromEnv(
    { NIMBUSQ_WORKERS: workers },
    createLambdaInvoker({ client: recorder.lambdaClient() }),
    { redis: stack.redis, prefix },
  );
  const app = createHttpApp({ redis: stack.redis, prefix, tokens: ["t"], ...(kick ? { kick } : {}) });
  return async (queue: string) => {
    const response = await app.request(`/queues/${queue}/jobs`, {
      method: "POST",
      headers: { authorization: "Bearer t", "content-type": "application/json" },
      body: JSON.stringify({ name: "send", data: {} }),
    });
    expect(response.status).toBe(202);
  };
}

const port = () => toRedisPort(stack.redis);
const invokesOf = (fn: string) => recorder.invokes.filter((i) => i.functionName === fn);

describe("the kick with the worker registry", () => {
  it("invokes below maxWorkers and sends nothing at the cap; a handed-over job's invocation counts", async () => {
    const prefix = uniquePrefix("kick");
    const add = api(prefix, "mail:mail-worker:10:2");
    const now = Date.now();
    // Idle queue: the add leases the job to the invocation it starts (registered until its lease ends).
    await add("mail");
    expect(invokesOf("mail-worker")).toHaveLength(1);
    expect(invokesOf("mail-worker")[0]).toMatchObject({
      invocationType: "Event",
      payload: { queue: "mail", reason: "handoff", handoff: { id: "1" } },
    });
    await trackWorkerInvocation(port(), prefix, "mail", "inv-1", now + 60_000);
    // Two running (the handed-over invocation and inv-1): at the cap, the job waits, nothing is sent.
    await add("mail");
    expect(invokesOf("mail-worker")).toHaveLength(1);
    expect(await stack.direct.lrange(`${prefix}:mail:wait`, 0, -1)).toEqual(["2"]);
    // A lapsed registration (an invocation that died without unregistering) does not count; a job
    // waits ahead, so the next one is not handed over but a worker is started for both.
    await trackWorkerInvocation(port(), prefix, "mail", "inv-1", now - 1);
    await add("mail");
    expect(invokesOf("mail-worker")).toHaveLength(2);
    expect(invokesOf("mail-worker")[1]?.payload).toEqual({ queue: "mail", reason: "kick" });
  });

  it("NIMBUSQ_HANDOFF=off keeps the plain kick; another value is refused naming the variable", async () => {
    const invoke = createLambdaInvoker({ client: recorder.lambdaClient() });
    const access = { redis: stack.redis, prefix: uniquePrefix("kick") };
    const env = (value: string) => ({ NIMBUSQ_WORKERS: "mail:m", NIMBUSQ_HANDOFF: value });
    expect(workerKickFromEnv(env("off"), invoke, access)?.handoffTarget).toBeUndefined();
    expect(workerKickFromEnv(env("on"), invoke, access)?.handoffTarget?.("mail")).toMatchObject({
      maxWorkers: 10,
    });
    expect(() => workerKickFromEnv(env("no"), invoke, access)).toThrow(/NIMBUSQ_HANDOFF.*"on", "off"/);
  });

  it("the plain kick (no handoff) counts the registry and stops at the cap", async () => {
    const prefix = uniquePrefix("kick");
    const kick = workerKickFromEnv(
      { NIMBUSQ_WORKERS: "mail:mail-plain:10:2" },
      createLambdaInvoker({ client: recorder.lambdaClient() }),
      { redis: stack.redis, prefix },
    );
    const now = Date.now();
    await kick?.("mail");
    expect(invokesOf("mail-plain")).toHaveLength(1);
    expect(invokesOf("mail-plain")[0]?.payload).toEqual({ queue: "mail", reason: "http" });
    await trackWorkerInvocation(port(), prefix, "mail", "inv-1", now + 60_000);
    await trackWorkerInvocation(port(), prefix, "mail", "inv-2", now + 60_000);
    await kick?.("mail");
    expect(invokesOf("mail-plain")).toHaveLength(1);
    await trackWorkerInvocation(port(), prefix, "mail", "inv-2", 0);
    await kick?.("mail");
    expect(invokesOf("mail-plain")).toHaveLength(2);
  });

  it("uses the sweeper's default of 10 when the entry gives no maxWorkers, per queue", async () => {
    const prefix = uniquePrefix("kick");
    const add = api(prefix, "bulk:bulk-worker,solo:solo-worker:5:1");
    const expires = Date.now() + 60_000;
    for (let i = 0; i < 9; i++) await trackWorkerInvocation(port(), prefix, "bulk", `b${i}`, expires);
    await trackWorkerInvocation(port(), prefix, "solo", "s0", expires);
    await add("bulk");
    await add("solo");
    expect(invokesOf("bulk-worker")).toHaveLength(1);
    expect(invokesOf("solo-worker")).toHaveLength(0);
    await trackWorkerInvocation(port(), prefix, "bulk", "b9", expires);
    await add("bulk");
    expect(invokesOf("bulk-worker")).toHaveLength(1);
  });

  it("at the cap, a lone add costs no more billed commands than a plain one (it reads the count and meta, but numbers no id and writes its replay guard once)", async () => {
    const prefix = uniquePrefix("kick");
    const withKick = api(prefix, "cost:cost-worker:10:1");
    const without = api(prefix, "other:other-worker");
    // Loads the script (a first EVALSHA answers NOSCRIPT); its job is handed over, and its invocation
    // (never run here) stays registered: the queue is at its maxWorkers of 1 from now on.
    await withKick("cost");
    await without("cost");
    stack.rest.resetStats();
    await without("cost");
    const plain = stack.rest.stats().billed;
    stack.rest.resetStats();
    await withKick("cost");
    expect(stack.rest.stats().billed - plain).toBe(0);
    stack.rest.resetStats();
    await trackWorkerInvocation(port(), prefix, "cost", "c0", Date.now() + 60_000);
    stack.rest.resetStats();
    await withKick("cost");
    expect(stack.rest.stats().billed - plain).toBe(0);
  });

  it("invokes anyway when the registry cannot be read", async () => {
    const prefix = uniquePrefix("kick");
    const kick = workerKickFromEnv(
      { NIMBUSQ_WORKERS: "down:down-worker:10:1" },
      createLambdaInvoker({ client: recorder.lambdaClient() }),
      {
        redis: {
          evalsha: () => Promise.reject(new Error("ECONNREFUSED")),
          eval: () => Promise.reject(new Error("x")),
          hgetall: async () => [],
        },
        prefix,
      },
    );
    await kick?.("down");
    expect(invokesOf("down-worker")).toHaveLength(1);
  });

  it("kicks from a producer once its event added ready jobs or ones due within a minute, not at the cap", async () => {
    const prefix = uniquePrefix("kick");
    const kick = workerKickFromEnv(
      { NIMBUSQ_WORKERS: "feed:feed-worker:10:1" },
      createLambdaInvoker({ client: recorder.lambdaClient() }),
      { redis: stack.redis, prefix },
    );
    let delay = 0;
    const handler = sqsProducer({
      queue: "feed",
      redis: stack.redis,
      prefix,
      map: (record) => ({ name: "item", data: { body: record.body }, opts: { delay } }),
      ...(kick ? { kick } : {}),
    });
    const event = (...bodies: string[]) => sqsEvent(bodies.map((body) => ({ body })));
    await handler(event("a", "b"), lambdaContext());
    expect(invokesOf("feed-worker")).toHaveLength(1);
    expect(invokesOf("feed-worker")[0]?.payload).toMatchObject({ queue: "feed" });
    // Delayed beyond the sweeper's tick: no kick (the tick promotes it on time).
    delay = 120_000;
    await handler(event("c"), lambdaContext());
    expect(invokesOf("feed-worker")).toHaveLength(1);
    delay = 0;
    await trackWorkerInvocation(port(), prefix, "feed", "f0", Date.now() + 60_000);
    await handler(event("d"), lambdaContext());
    expect(invokesOf("feed-worker")).toHaveLength(1);
    await trackWorkerInvocation(port(), prefix, "feed", "f0", 0);
    await handler(event("e"), lambdaContext());
    expect(invokesOf("feed-worker")).toHaveLength(2);
    // Delayed but due within a minute: a kick with the due time, so the worker waits for it.
    delay = 2000;
    const before = Date.now();
    await handler(event("f"), lambdaContext());
    expect(invokesOf("feed-worker")).toHaveLength(3);
    const payload = invokesOf("feed-worker")[2]?.payload as { wakeAt?: number } | undefined;
    const wakeAt = payload?.wakeAt ?? 0;
    expect(wakeAt).toBeGreaterThanOrEqual(before + 2000);
    expect(wakeAt).toBeLessThanOrEqual(Date.now() + 2000);
  });
});
