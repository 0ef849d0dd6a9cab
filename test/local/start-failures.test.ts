/**
 * `npm start` fails cleanly (issue 11, point 12): without redis-server it says what to install or to set
 * REDIS_URL; with a port taken it names the port and the variable; either way no stack trace, a
 * non-zero exit, and no redis-server process or temp directory left behind.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readlink, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectOutput } from "../support/child-output.ts";

const tsxCli = resolve("node_modules/tsx/dist/cli.mjs");

/** Runs infra/local/start.ts with node itself (so PATH may lack everything) and its own TMPDIR. */
function runStart(env: Record<string, string>, tmp: string): Promise<{ code: number | null; text: string }> {
  const base = { ...process.env };
  delete base.REDIS_URL;
  delete base.REDIS_SERVER_BIN;
  const child = spawn(process.execPath, [tsxCli, "infra/local/start.ts"], {
    env: { ...base, TMPDIR: tmp, NIMBUSQ_DEMO: "0", PORT: "0", REST_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const text = collectOutput(child);
  return new Promise((done) => child.on("exit", (code) => done({ code, text: text() })));
}

/** Processes whose working directory is under `dir`: redis-server runs in the temp dir it was given. */
async function processesUnder(dir: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => "");
    if (cwd.startsWith(dir)) found.push(Number(entry));
  }
  return found;
}

async function expectNothingLeft(tmp: string): Promise<void> {
  expect((await readdir(tmp)).filter((name) => name.startsWith("nimbusq-redis-"))).toEqual([]);
  expect(await processesUnder(tmp)).toEqual([]);
}

function expectNoStackTrace(text: string): void {
  expect(text).not.toMatch(/^\s+at /m);
  expect(text).not.toMatch(/Error:|node:internal/);
}

let tmp: string;
let blocker: Server;
let takenPort: number;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "nimbusq-start-test-"));
  blocker = createServer();
  takenPort = await new Promise<number>((done) =>
    blocker.listen(0, "127.0.0.1", () => done((blocker.address() as { port: number }).port)),
  );
});
afterAll(async () => {
  await new Promise((done) => blocker.close(done));
  await rm(tmp, { recursive: true, force: true });
});

describe("npm start when it cannot start", () => {
  it("says to install redis-server or set REDIS_URL when there is no redis-server on PATH", async () => {
    const emptyBin = await mkdtemp(join(tmp, "bin-"));
    const { code, text } = await runStart({ PATH: emptyBin }, tmp);

    expect(code).toBe(1);
    expect(text).toContain('[nimbusq] failed to start: redis-server not found: no "redis-server" on PATH');
    expect(text).toContain("apt-get install redis-server");
    expect(text).toContain("REDIS_URL=redis://127.0.0.1:6379 npm start");
    expectNoStackTrace(text);
    await expectNothingLeft(tmp);
  });

  it("names the taken HTTP port and PORT, and stops the redis-server it had started", async () => {
    const { code, text } = await runStart({ PORT: String(takenPort) }, tmp);

    expect(code).toBe(1);
    expect(text).toContain(`failed to start: port ${takenPort} on 127.0.0.1 is already in use (HTTP API)`);
    expect(text).toContain("Set PORT to a free port");
    expectNoStackTrace(text);
    await expectNothingLeft(tmp);
  });

  it("names the taken REST port and REST_PORT, and stops the redis-server it had started", async () => {
    const { code, text } = await runStart({ REST_PORT: String(takenPort) }, tmp);

    expect(code).toBe(1);
    expect(text).toContain(`failed to start: port ${takenPort} on 127.0.0.1 is already in use (REST server)`);
    expect(text).toContain("Set REST_PORT to a free port");
    expect(text).not.toContain("Set PORT");
    expectNoStackTrace(text);
    await expectNothingLeft(tmp);
  });
});
