/**
 * Bull Board, unchanged, in a real headless browser (Debian's chromium through playwright-core),
 * opened on what `npm start` serves: it lists the demo queues and shows a job nimbusq completed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
let child: ChildProcess;
let output = "";

beforeAll(async () => {
  child = spawn("node_modules/.bin/tsx", ["infra/local/start.ts"], {
    env: { ...process.env, PORT: "0", REST_PORT: "0", NIMBUSQ_TICK_MS: "1000" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const end = Date.now() + 30_000;
  while (!output.includes("running; press Ctrl-C") && Date.now() < end)
    await new Promise((r) => setTimeout(r, 100));
}, 40_000);

afterAll(async () => {
  child.kill("SIGINT");
  await new Promise((resolve) => child.once("exit", resolve));
});

describe("Bull Board on npm start", () => {
  it("finds chromium (installed by .ci/run from Debian)", () => {
    expect(existsSync(executablePath)).toBe(true);
  });

  it("lists the demo queues and shows a completed job", async () => {
    const boardUrl = /Bull Board at (\S+)/.exec(output)?.[1];
    expect(boardUrl).toBeDefined();
    const browser = await chromium.launch({
      executablePath,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    try {
      const page = await browser.newPage();
      await page.goto(boardUrl as string);
      await page.getByText("email", { exact: true }).first().waitFor({ timeout: 20_000 });
      await page.getByText("report", { exact: true }).first().waitFor({ timeout: 20_000 });
      const deadline = Date.now() + 30_000;
      let found = false;
      while (!found && Date.now() < deadline) {
        await page.goto(`${boardUrl}/queue/report?status=completed`);
        found = await page
          .getByText("sales-section")
          .first()
          .waitFor({ timeout: 3000 })
          .then(() => true)
          .catch(() => false);
      }
      await page.screenshot({ path: ".tmp/bull-board.png", fullPage: true }).catch(() => undefined);
      expect(found).toBe(true);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
