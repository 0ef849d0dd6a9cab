/**
 * Per-queue default job options over HTTP (issue 12, point 7): a job added to queue A gets A's
 * defaults, one added to B gets B's, any other queue the global ones; a job's own opts still win.
 * Set from code (`queueDefaultJobOptions`) or the environment (`NIMBUSQ_QUEUE_DEFAULTS`), checked
 * with core's job-option rules when the app is built.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../core/index.ts";
import { demoQueues } from "../../examples/demo/demo-queues.ts";
import { createHttpApp, httpOptionsFromEnv } from "../../functions/http/index.ts";
import { field, makeApi } from "../support/http-app.ts";
import { sharedRedis } from "../support/stack.ts";

const env = {
  UPSTASH_REDIS_REST_URL: "http://127.0.0.1:1",
  UPSTASH_REDIS_REST_TOKEN: "x",
  NIMBUSQ_API_TOKENS: "t",
};

describe("per-queue default job options", () => {
  it("gives each queue's jobs that queue's defaults, over the global ones", async () => {
    const { call } = makeApi({
      defaultJobOptions: { attempts: 2, removeOnComplete: true },
      queueDefaultJobOptions: {
        alpha: { attempts: 5, backoff: { type: "exponential", delay: 700 } },
        beta: { attempts: 3, priority: 4 },
      },
    });
    const add = async (queue: string, opts?: object) => {
      const added = await call("POST", `/queues/${queue}/jobs`, {
        json: { name: "n", data: {}, ...(opts ? { opts } : {}) },
      });
      expect(added.status).toBe(202);
      const read = await call("GET", `/queues/${queue}/jobs/${field<string>(added, "id")}`);
      return field<Record<string, unknown>>(read, "opts");
    };
    expect(await add("alpha")).toMatchObject({
      attempts: 5,
      backoff: { type: "exponential", delay: 700 },
      removeOnComplete: true,
    });
    const beta = await add("beta");
    expect(beta).toMatchObject({ attempts: 3, priority: 4, removeOnComplete: true });
    expect(beta.backoff).toBeUndefined();
    expect(await add("gamma")).toMatchObject({ attempts: 2, removeOnComplete: true });
    expect(await add("alpha", { attempts: 9 })).toMatchObject({ attempts: 9, backoff: { delay: 700 } });
  });

  it("reads NIMBUSQ_QUEUE_DEFAULTS", () => {
    const options = httpOptionsFromEnv({
      ...env,
      NIMBUSQ_QUEUE_DEFAULTS: '{"email":{"attempts":3,"backoff":{"type":"fixed","delay":1000}}}',
    });
    expect(options.queueDefaultJobOptions).toEqual({
      email: { attempts: 3, backoff: { type: "fixed", delay: 1000 } },
    });
    expect(httpOptionsFromEnv(env).queueDefaultJobOptions).toBeUndefined();
  });

  it.each([
    ["not json", "NIMBUSQ_QUEUE_DEFAULTS must be JSON"],
    ["[1]", "queue defaults must be an object"],
    ['{"a:b":{}}', "must be a name without"],
    ['{"email":{"attempts":"3"}}', "email.attempts must be an integer"],
    ['{"email":{"atempts":3}}', "email.atempts must be one of the known keys"],
    ['{"email":{"jobId":"same"}}', "email.jobId must be absent"],
    ['{"email":7}', "email must be an object"],
  ])("refuses NIMBUSQ_QUEUE_DEFAULTS=%s, naming the field", (text, message) => {
    const read = () => httpOptionsFromEnv({ ...env, NIMBUSQ_QUEUE_DEFAULTS: text });
    expect(read).toThrow(ValidationError);
    expect(read).toThrow(message);
  });

  it("refuses bad per-queue options given in code when the app is built", () => {
    expect(() =>
      createHttpApp({
        redis: sharedRedis(),
        tokens: ["t"],
        queueDefaultJobOptions: { email: { backoff: { type: "exponential", delay: -1 } } },
      }),
    ).toThrow(/email\.backoff/);
  });

  it("deploys the demo queues' own defaults through serverless.yml", () => {
    const line = /NIMBUSQ_QUEUE_DEFAULTS: '(.*)'/.exec(readFileSync("serverless.yml", "utf8"))?.[1];
    const options = httpOptionsFromEnv({ ...env, NIMBUSQ_QUEUE_DEFAULTS: line ?? "" });
    expect(options.queueDefaultJobOptions).toEqual(
      Object.fromEntries(demoQueues.map((q) => [q.name, q.defaultJobOptions])),
    );
  });
});
