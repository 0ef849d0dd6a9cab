/**
 * Starts a disposable redis-server (Debian's `redis-server` binary) on a free loopback port, for the
 * local stack, the tests and the benchmarks. Nothing is persisted: `--save ""`, no AOF, and
 * `noeviction` as Upstash and BullMQ both require.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RedisServer {
  host: string;
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: string;
  stop(): Promise<void>;
  /** Kills the server at once (SIGKILL), as a crash would; stop() then only cleans up. */
  kill(): Promise<void>;
}

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("could not read the port of a probe socket"));
      });
    });
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.connect(port, "127.0.0.1");
  });
}

/** The redis-server binary is not installed (or not on PATH): retrying cannot help. */
export class RedisServerNotFoundError extends Error {
  override name = "RedisServerNotFoundError";
  constructor(readonly binary: string) {
    super(`redis-server not found: no "${binary}" on PATH`);
  }
}

export interface StartRedisOptions {
  binary?: string;
  /** Extra `--flag value` pairs for redis-server. */
  args?: string[];
}

/** Starts redis-server and resolves once it accepts connections. */
export async function startRedisServer(options: StartRedisOptions = {}): Promise<RedisServer> {
  const binary = options.binary ?? process.env.REDIS_SERVER_BIN ?? "redis-server";
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const dir = await mkdtemp(join(tmpdir(), "nimbusq-redis-"));
    const child = spawn(
      binary,
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--maxmemory-policy",
        "noeviction",
        "--dir",
        dir,
        "--logfile",
        "",
        ...(options.args ?? []),
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let spawnError: NodeJS.ErrnoException | undefined;
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => {
      child.once("exit", (code) => resolve(code));
      // A binary that cannot be spawned (ENOENT, EACCES) emits "error" and never "exit".
      child.once("error", (error) => {
        spawnError = error;
        resolve(null);
      });
    });
    try {
      await waitUntilUp(child, port, exited);
      return {
        host: "127.0.0.1",
        port,
        url: `redis://127.0.0.1:${port}`,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill("SIGTERM");
            await exited;
          }
          await rm(dir, { recursive: true, force: true });
        },
        kill: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill("SIGKILL");
            await exited;
          }
        },
      };
    } catch (error) {
      lastError = new Error(`redis-server did not start on port ${port}: ${String(error)} ${stderr}`.trim());
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
      if (spawnError?.code === "ENOENT") throw new RedisServerNotFoundError(binary);
    }
  }
  throw lastError;
}

async function waitUntilUp(child: ChildProcess, port: number, exited: Promise<number | null>): Promise<void> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (gone)
      throw new Error(
        child.pid === undefined ? "could not be spawned" : `exited with code ${child.exitCode}`,
      );
    if (await canConnect(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("timed out after 10 s");
}
