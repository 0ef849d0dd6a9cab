/**
 * The chaos tests' fleet: worker processes forked from test/worker/fixtures/chaos-worker.ts, each
 * telling the parent over IPC when a processor starts, when its side effect is done and what errors
 * its worker emitted, so side effects are counted by the processes themselves, not read from Redis.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Redis as IORedis } from "ioredis";
import type { Queue } from "../../core/index.ts";
import { misplacedJobs } from "./state-walk.ts";

const workerScript = fileURLToPath(new URL("../worker/fixtures/chaos-worker.ts", import.meta.url));

export interface Fleet {
  children: Map<string, ChildProcess>;
  /** Per job: who started it, and when (the worker's clock). */
  starts: Map<string, { by: string; at: number }[]>;
  /** Per job: who finished its side effect, once per run. */
  effects: Map<string, string[]>;
  errors: { by: string; at: number; text: string }[];
}

export function newFleet(): Fleet {
  return { children: new Map(), starts: new Map(), effects: new Map(), errors: [] };
}

/** Where the worker connects: NQ_URL (https:// with NQ_TOKEN, or redis://) and NQ_PREFIX. */
export type WorkerEnv = { NQ_URL: string; NQ_PREFIX: string; NQ_TOKEN?: string };

/** Forks worker `name`; resolves once its run loop is started. */
export function startWorker(fleet: Fleet, name: string, env: WorkerEnv): Promise<void> {
  const child = fork(workerScript, [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, ...env, NQ_NAME: name },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  fleet.children.set(name, child);
  return new Promise((resolve) => {
    child.on(
      "message",
      (message: { type: string; id?: string; by: string; at?: number; message?: string }) => {
        const id = message.id as string;
        const start = { by: message.by, at: message.at ?? 0 };
        if (message.type === "ready") resolve();
        else if (message.type === "start") fleet.starts.set(id, [...(fleet.starts.get(id) ?? []), start]);
        else if (message.type === "ok") fleet.effects.set(id, [...(fleet.effects.get(id) ?? []), message.by]);
        else if (message.type === "error")
          fleet.errors.push({ by: message.by, at: message.at ?? 0, text: message.message ?? "" });
      },
    );
  });
}

/**
 * Asks a worker to close (running jobs finish and are acked); resolves once its process exited: true,
 * or false when it had not within `timeoutMs` and was killed (a close that hangs).
 */
export function stopWorker(child: ChildProcess, timeoutMs = 30_000): Promise<boolean> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(true);
    const timer = setTimeout(() => {
      resolve(false);
      child.kill("SIGKILL");
    }, timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
    child.send("stop");
  });
}

/** Kills whatever is left of the fleet (after a failed test). */
export function killFleet(fleet: Fleet): void {
  for (const child of fleet.children.values()) if (child.exitCode === null) child.kill("SIGKILL");
}

/** Waits (at most `timeoutMs`) until `jobCount` jobs are completed or failed in queue key `queueKey`. */
export async function waitFinished(
  raw: IORedis,
  queueKey: string,
  jobCount: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const finished = (await raw.zcard(`${queueKey}:completed`)) + (await raw.zcard(`${queueKey}:failed`));
    if (finished >= jobCount) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Adds `count` jobs "effect" in chunks of `chunk`, each running `baseMs` + 0–80 ms (by its number); a
 * third of them grouped (opts.group, four tenants), so faults meet grouped and ungrouped jobs alike.
 */
export async function fillChaosQueue(
  queue: Queue,
  count: number,
  chunk: number,
  baseMs: number,
): Promise<void> {
  for (let first = 0; first < count; first += chunk) {
    await queue.addBulk(
      Array.from({ length: Math.min(chunk, count - first) }, (_, n) => ({
        name: "effect",
        data: { n: first + n, ms: baseMs + ((first + n) % 5) * 20 },
        opts: (first + n) % 3 === 0 ? { group: { id: `tenant-${(first + n) % 4}` } } : {},
      })),
    );
  }
}

/** Runs each fault at its offset (ms) from now, in order; answers when they started. */
export async function runSchedule(schedule: [number, () => unknown][]): Promise<number> {
  const began = Date.now();
  for (const [at, step] of schedule) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, began + at - Date.now())));
    await step();
  }
  return began;
}

/** What became of jobs 1…count of queue key `queueKey`, by Redis and by the processes' own counts. */
export async function fleetOutcome(raw: IORedis, queueKey: string, fleet: Fleet, count: number) {
  const ids = Array.from({ length: count }, (_, n) => String(n + 1));
  const completed = new Set(await raw.zrange(`${queueKey}:completed`, 0, -1));
  const failed = await raw.zrange(`${queueKey}:failed`, 0, -1);
  const runs = (id: string) => fleet.effects.get(id)?.length ?? 0;
  return {
    ids,
    completed,
    failed,
    lost: ids.filter((id) => !completed.has(id) && !failed.includes(id)),
    twice: ids.filter((id) => runs(id) > 1),
    neverRan: ids.filter((id) => runs(id) === 0),
    failedAfterEffect: failed.filter((id) => runs(id) > 0),
    misplaced: await misplacedJobs(raw, queueKey, ids),
  };
}
