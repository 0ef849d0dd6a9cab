/**
 * The parent's side of a throughput worker process (throughput-worker.ts): forked with an IPC channel,
 * spoken to one request at a time, asked to exit at the end and killed if it does not.
 */
import { type ChildProcess, fork } from "node:child_process";
import { resolve } from "node:path";
import type { ChildMessage, ParentMessage, System } from "./throughput-shared.ts";

const workerScript = resolve(import.meta.dirname, "throughput-worker.ts");
const repoRoot = resolve(import.meta.dirname, "../..");

/** One worker process, spoken to one request at a time over IPC. */
export class WorkerProcess {
  private waiting?: { resolve(m: ChildMessage): void; reject(e: Error): void };
  private gone?: string;

  private constructor(
    readonly system: System,
    private readonly child: ChildProcess,
  ) {
    child.on("message", (message: ChildMessage) => {
      const waiting = this.waiting;
      this.waiting = undefined;
      if (message.type === "error")
        waiting?.reject(new Error(`${system} worker process: ${message.message}`));
      else waiting?.resolve(message);
    });
    const gone = (why: string) => {
      this.gone ??= `${system} worker process ${why}`;
      this.waiting?.reject(new Error(this.gone));
      this.waiting = undefined;
    };
    child.on("exit", (code, signal) => gone(`exited (${signal ?? code})`));
    child.on("error", (error) => gone(`failed: ${error.message}`));
  }

  static async start(system: System): Promise<WorkerProcess> {
    // BENCH_CPU_PROF=DIR: each worker process writes a CPU profile into DIR when it exits.
    const profileDir = process.env.BENCH_CPU_PROF;
    const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${resolve(profileDir)}`] : [];
    const child = fork(workerScript, [], {
      cwd: repoRoot,
      execArgv: ["--import", "tsx", ...profile],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const worker = new WorkerProcess(system, child);
    try {
      await worker.next(undefined, 30_000);
    } catch (error) {
      child.kill("SIGKILL");
      throw error;
    }
    return worker;
  }

  /** Sends `message` (if any) and resolves with the next answer; rejects after `timeoutMs`. */
  next(message: ParentMessage | undefined, timeoutMs: number): Promise<ChildMessage> {
    if (this.gone) return Promise.reject(new Error(this.gone));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`${this.system} worker process: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting = {
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      if (message) this.child.send(message);
    });
  }

  /** Asks it to exit; kills it if it has not within two seconds. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    if (this.child.connected) this.child.send({ type: "exit" } satisfies ParentMessage);
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 2000);
    await exited;
    clearTimeout(timer);
  }
}
