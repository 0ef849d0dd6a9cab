import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { collectOutput } from "../support/child-output.ts";

function runStart(env: Record<string, string>): {
  output: Promise<{ code: number | null; text: string }>;
  kill: () => void;
  text: () => string;
} {
  const child = spawn("node_modules/.bin/tsx", ["infra/local/start.ts"], {
    env: { ...process.env, PORT: "0", REST_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const text = collectOutput(child);
  return {
    output: new Promise((resolve) => child.on("exit", (code) => resolve({ code, text: text() }))),
    kill: () => child.kill("SIGINT"),
    text,
  };
}

describe("npm start", () => {
  it("runs the producer demo against its own redis-server and REST server", async () => {
    const { code, text } = await runStart({ NIMBUSQ_EXIT_AFTER_DEMO: "1" }).output;
    expect(text).toContain("Upstash-compatible REST API at http://127.0.0.1:");
    expect(text).toMatch(/HTTP API at http:\/\/127\.0\.0\.1:\d+ \(token dev-token\)/);
    expect(text).toMatch(/Bull Board at http:\/\/127\.0\.0\.1:\d+\/admin\/queues/);
    expect(text).toMatch(
      /email counts: +\{"active":0,"completed":0,"delayed":1,"failed":0,"prioritized":1,"waiting":9,"waiting-children":0\}/,
    );
    expect(text).toContain(
      'report counts: {"active":0,"completed":0,"delayed":0,"failed":0,"prioritized":0,"waiting":1,"waiting-children":1}',
    );
    expect(text).toContain("stopped");
    expect(code).toBe(0);
  });

  it("keeps serving until Ctrl-C and then stops cleanly", async () => {
    const run = runStart({ NIMBUSQ_DEMO: "0" });
    const deadline = Date.now() + 20_000;
    while (!run.text().includes("running; press Ctrl-C") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const url = /REST API at (http:\/\/\S+)/.exec(run.text())?.[1];
    expect(url).toBeDefined();
    const response = await fetch(`${url}/`, {
      method: "POST",
      body: '["PING"]',
      headers: { authorization: "Bearer local-rest-token", "content-type": "application/json" },
    });
    expect(await response.json()).toEqual({ result: "PONG" });
    run.kill();
    const { code, text } = await run.output;
    expect(text).toContain("stopped");
    expect(code).toBe(0);
  });
});
