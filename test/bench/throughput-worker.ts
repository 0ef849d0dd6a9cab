/**
 * One worker process of the throughput section (forked by throughput.ts with an IPC channel). For each
 * run the parent sends `prepare` (queue, system, processor, jobs in flight, endpoint); this process builds
 * the worker without starting it and answers `ready`; on `go` it starts the clock, processes until the
 * last job is done (or the run's time limit), stops the clock, closes the worker and answers `done`.
 * The jobs are already waiting when `go` comes: only processing is timed. Only one library is loaded:
 * the nimbusq process never imports BullMQ, the BullMQ one never imports nimbusq.
 */
import { performance } from "node:perf_hooks";
import type { ChildMessage, ParentMessage, PrepareMessage, RunReport } from "./throughput-shared.ts";
import { durationMs } from "./throughput-shared.ts";

interface Prepared {
  /** Processes until done or the limit; resolves with the report once the worker is closed. */
  go(): Promise<RunReport>;
  close(): Promise<void>;
}

const send = (message: ChildMessage) => process.send?.(message);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The processor and the counters every run keeps the same way on both sides. */
function meter(m: PrepareMessage) {
  const state = { done: 0, lastDoneAt: 0, processorMs: 0, processed: 0, startedAt: 0, at10: 0, at90: 0 };
  const tenth = Math.max(1, Math.ceil(m.jobs * 0.1));
  const ninetieth = Math.max(tenth + 1, Math.floor(m.jobs * 0.9));
  const processor = async (job: { data: unknown }) => {
    const ms = durationMs(m.processor, (job.data as { n: number }).n);
    const started = performance.now();
    if (ms > 0) await sleep(ms);
    state.processorMs += performance.now() - started;
    state.processed += 1;
  };
  const completed = () => {
    state.done += 1;
    state.lastDoneAt = performance.now();
    if (state.done === tenth) state.at10 = state.lastDoneAt;
    if (state.done === ninetieth) state.at90 = state.lastDoneAt;
  };
  const report = (): RunReport => ({
    done: state.done,
    elapsedMs: (state.done >= m.jobs ? state.lastDoneAt : performance.now()) - state.startedAt,
    processorMeanMs: state.processed > 0 ? state.processorMs / state.processed : 0,
    middleJobsPerSecond:
      state.at90 > state.at10 ? ((ninetieth - tenth) / (state.at90 - state.at10)) * 1000 : Number.NaN,
  });
  return { state, processor, completed, report };
}

async function prepareNimbusq(m: PrepareMessage): Promise<Prepared> {
  const { Worker, createRedis } = await import("../../core/index.ts");
  if (!m.nimbusqTcp && !m.rest) throw new Error("nimbusq needs a REST endpoint");
  const redis =
    m.nimbusqTcp || !m.rest
      ? createRedis({ url: `redis://${m.tcp?.host}:${m.tcp?.port}` })
      : createRedis({ url: m.rest.url, token: m.rest.token });
  const run = meter(m);
  const options = {
    redis,
    prefix: m.prefix,
    batchSize: 2 * m.inFlight,
    concurrency: m.inFlight,
    ...(m.events ? { events: m.events } : {}),
  };
  const worker = new Worker(m.queue, run.processor, options as ConstructorParameters<typeof Worker>[2]);
  worker.on("completed", run.completed);
  // Opens the keep-alive connection (or the TCP one) before the clock, as BullMQ's waitUntilReady connects.
  await redis.hgetall(`${m.prefix}:${m.queue}:meta`);
  return {
    async go() {
      run.state.startedAt = performance.now();
      const deadline = Date.now() + m.limitMs;
      // Every job is waiting already: one drain should take them all; more only if it stops early.
      while (run.state.done < m.jobs && Date.now() < deadline) {
        const summary = await worker.drain({ deadline });
        if (summary.leased === 0 && run.state.done < m.jobs) await sleep(5);
      }
      return run.report();
    },
    close: async () => {
      if ("close" in redis) await redis.close();
    },
  };
}

async function prepareBullmq(m: PrepareMessage): Promise<Prepared> {
  const { Worker } = await import("bullmq");
  if (!m.tcp) throw new Error("BullMQ needs a TCP endpoint");
  const run = meter(m);
  const worker = new Worker(m.queue, run.processor, {
    connection: { host: m.tcp.host, port: m.tcp.port, maxRetriesPerRequest: null },
    prefix: m.prefix,
    concurrency: m.inFlight,
    autorun: false,
  });
  let failure: Error | undefined;
  worker.on("error", (error) => {
    failure ??= error;
  });
  await worker.waitUntilReady();
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  worker.on("completed", () => {
    run.completed();
    if (run.state.done >= m.jobs) finish();
  });
  return {
    async go() {
      run.state.startedAt = performance.now();
      const limit = setTimeout(finish, m.limitMs);
      const running = worker.run().catch((error: Error) => {
        failure ??= error;
        finish();
      });
      await finished;
      clearTimeout(limit);
      const report = run.report();
      await worker.close();
      await running;
      if (failure && report.done < m.jobs) throw failure;
      return report;
    },
    close: () => worker.close(),
  };
}

let prepared: Prepared | undefined;

async function handle(message: ParentMessage): Promise<void> {
  if (message.type === "prepare") {
    await prepared?.close();
    prepared = await (message.system === "nimbusq" ? prepareNimbusq(message) : prepareBullmq(message));
    send({ type: "ready" });
  } else if (message.type === "go") {
    const run = prepared;
    prepared = undefined;
    if (!run) throw new Error("go before prepare");
    send({ type: "done", ...(await run.go()) });
  } else {
    await prepared?.close();
    process.exit(0);
  }
}

process.on("message", (message: ParentMessage) => {
  handle(message).catch((error: unknown) => {
    send({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  });
});
// The parent went away (or killed the channel): nothing is left to report to.
process.on("disconnect", () => process.exit(0));
send({ type: "ready" });
