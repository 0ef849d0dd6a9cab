/**
 * The list of option keys core refuses others by (core/redis/option-keys.ts) holds every key of
 * nimbusq's option interfaces — a compile-time check: a key added to an interface and not to the
 * list fails `npm run typecheck` — and the refusals read as the issue asks.
 */
import { describe, expect, it } from "vitest";
import {
  type FlowProducerOptions,
  type FunctionWorkerOptions,
  Queue,
  QueueEvents,
  type QueueEventsOptions,
  type QueueOptions,
  ValidationError,
  Worker,
  type WorkerOptions,
} from "../../core/index.ts";
import type { optionKeys } from "../../core/redis/option-keys.ts";
import type { WorkerHandlerOptions } from "../../functions/worker.ts";
import { sharedRedis } from "../support/stack.ts";

type AllKeys =
  | keyof WorkerOptions
  | keyof QueueOptions
  | keyof FlowProducerOptions
  | keyof QueueEventsOptions
  | keyof FunctionWorkerOptions<unknown, unknown>
  | keyof WorkerHandlerOptions<unknown, unknown>;
type Missing = Exclude<AllKeys, (typeof optionKeys)[number]>;
const everyKeyListed: [Missing] extends [never] ? true : Missing = true;

const refusal = (make: () => unknown): string => {
  try {
    make();
  } catch (error) {
    if (error instanceof ValidationError) return `${error.field}: ${error.rule}`;
    throw error;
  }
  return "accepted";
};

describe("option keys", () => {
  it("lists every key of nimbusq's option interfaces", () => {
    expect(everyKeyListed).toBe(true);
  });

  it("refuses a typo with the nearest option, and BullMQ's meaningless options with the equivalent", () => {
    const redis = sharedRedis();
    const worker = (options: object) => () => new Worker("q", async () => 1, { redis, ...options } as never);
    expect(refusal(worker({ concurency: 5 }))).toBe(
      "concurency: left out: no nimbusq option has that name (did you mean concurrency?)",
    );
    expect(refusal(worker({ lockDuration: 30_000 }))).toBe(
      "lockDuration: left out: a BullMQ option; here leaseMs sets how long a job's lease lasts",
    );
    expect(refusal(worker({ autorun: false }))).toMatch(
      /^autorun: left out: a BullMQ option; here nothing starts/,
    );
    expect(refusal(() => new Queue("q", { redis, skipVersionCheck: true } as never))).toMatch(
      /^skipVersionCheck/,
    );
    expect(refusal(() => new Queue("q", { redis, defaultJobOptoins: {} } as never))).toMatch(
      /did you mean defaultJobOptions\?/,
    );
    // One options object shared between classes, as BullMQ users do: another class's key passes.
    const shared = { redis, prefix: "p", defaultJobOptions: { attempts: 2 }, concurrency: 3 };
    expect(refusal(() => new Queue("q", shared))).toBe("accepted");
    expect(refusal(worker(shared))).toBe("accepted");
    expect(refusal(() => new QueueEvents("q", { redis, autorun: false }))).toBe("accepted");
  });
});
