/**
 * A redis-server that can be killed and started again on the same port and data directory, with
 * every write fsynced to its append-only file first (`appendfsync always`): a restart loses no write
 * Redis answered, as a managed Redis with AOF promises. For the chaos tests' "Redis restarted".
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canConnect, freePort } from "../../infra/redis-server.ts";

export interface RestartableRedis {
  host: string;
  port: number;
  /** SIGKILL, as a crash: nothing is flushed that was not already. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory; resolves once it accepts connections. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRestartableRedis(): Promise<RestartableRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "nimbusq-aof-"));
  let child: ChildProcess | undefined;
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
  const aof = ["--appendonly", "yes", "--appendfsync", "always", "--logfile", ""];

  async function start(): Promise<void> {
    const started = spawn(process.env.REDIS_SERVER_BIN ?? "redis-server", [...args, ...aof], {
      stdio: "ignore",
    });
    child = started;
    const deadline = Date.now() + 10_000;
    while (!(await canConnect(port))) {
      if (started.exitCode !== null) throw new Error(`redis-server exited with code ${started.exitCode}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not come up on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function kill(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGKILL");
    await exited;
  }

  await start();
  return {
    host: "127.0.0.1",
    port,
    kill,
    start,
    stop: async () => {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
