/**
 * The sweeper loop and the function worker are core's public API now: what they are given wrongly
 * answers a ValidationError naming the field when they are made (at a function's cold start), never a
 * TypeError in the first pass; the Lambda handlers built on them do the same.
 */
import { describe, expect, it } from "vitest";
import { createFunctionWorker, createSweeper, ValidationError } from "../../core/index.ts";
import { createHttpApp } from "../../functions/http/app.ts";
import { sweeperHandler } from "../../functions/sweeper.ts";
import { workerHandler } from "../../functions/worker.ts";

const ports = { connect: () => ({}) as never, startWorkers: async () => {} };
const workerPorts = { connect: () => ({}) as never, onRegisterError: () => {} };
const processor = async () => "ok";

function fieldOf(make: () => unknown): string {
  let thrown: unknown;
  try {
    make();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ValidationError);
  return (thrown as ValidationError).field;
}

describe("createSweeper", () => {
  it.each([
    ["no settings", undefined, ports, "settings"],
    ["queues as a string", { queues: "email" }, ports, "queues"],
    ["no queue", { queues: [] }, ports, "queues"],
    ["a queue name with a colon", { queues: ["a:b"] }, ports, "queues[0]"],
    ["an unknown queue key", { queues: [{ name: "email", batch: 5 }] }, ports, "queues[0].batch"],
    ["a batchSize of 0", { queues: [{ name: "email", batchSize: 0 }] }, ports, "queues[0].batchSize"],
    ["a mode", { queues: ["email"], mode: "twice" }, ports, "mode"],
    ["a negative tick", { queues: ["email"], tickMs: -1 }, ports, "tickMs"],
    ["no ports", { queues: ["email"] }, undefined, "ports"],
    ["no startWorkers", { queues: ["email"] }, { connect: ports.connect }, "ports.startWorkers"],
  ])("refuses %s", (_label, settings, given, field) => {
    expect(fieldOf(() => createSweeper(settings as never, given as never))).toBe(field);
  });

  it("takes a well-formed sweeper", () => {
    expect(() =>
      createSweeper({ queues: ["email", { name: "report", batchSize: 50 }] }, ports),
    ).not.toThrow();
  });
});

describe("createFunctionWorker", () => {
  it.each([
    ["no options", undefined, workerPorts, "options"],
    ["a queue number", { queue: 5, processor }, workerPorts, "queue"],
    ["no processor", { queue: "email" }, workerPorts, "processor"],
    ["a fractional timeout", { queue: "email", processor, jobTimeoutMs: 1.5 }, workerPorts, "jobTimeoutMs"],
    ["no ports", { queue: "email", processor }, undefined, "ports"],
  ])("refuses %s", (_label, options, given, field) => {
    expect(fieldOf(() => createFunctionWorker(options as never, given as never))).toBe(field);
  });

  it("refuses an invocation whose queue is no name", () => {
    const worker = createFunctionWorker({ queue: "email", processor }, workerPorts);
    expect(fieldOf(() => worker.accept({ queue: 5 } as never))).toBe("event.queue");
  });
});

describe("the Lambda handlers", () => {
  it("answer bad options with a ValidationError, not a TypeError", () => {
    expect(fieldOf(() => sweeperHandler({} as never))).toBe("queues");
    expect(fieldOf(() => sweeperHandler(undefined as never))).toBe("queues");
    expect(fieldOf(() => workerHandler(undefined as never))).toBe("options");
    expect(fieldOf(() => workerHandler({ queue: "email" } as never))).toBe("processor");
    const redis = {} as never;
    expect(fieldOf(() => createHttpApp({ redis, tokens: [] }))).toBe("tokens");
    expect(fieldOf(() => createHttpApp({ redis, tokens: ["t"], maxBodyBytes: 0 }))).toBe("maxBodyBytes");
    expect(fieldOf(() => createHttpApp({ redis, tokens: ["t"], cors: { origins: ["x"] } }))).toBe(
      "cors.origins",
    );
  });
});
