import { Queue } from "./core/index.ts";
import { startBenchEnv, stopBenchEnv, unique, waitUntil } from "./test/bench/common.ts";
import { startStack } from "./test/bench/latency.ts";

const env = await startBenchEnv(true, () => {});
const queue = unique("late");
const prefix = unique("p");
const rows: [number, number, number][] = [];
const t0 = Date.now();
const origRegister = (await import("./infra/local/local-lambda.ts")).LocalLambda.prototype.invoke;
const calls: string[] = [];
const LL = (await import("./infra/local/local-lambda.ts")).LocalLambda.prototype as unknown as { start: (n: string, e: unknown) => Promise<void> };
const origStart = LL.start;
LL.start = function (n: string, e: unknown) { calls.push(`${Date.now() - t0} start ${n} ${JSON.stringify(e)}`); const p = origStart.call(this, n, e); p.then(() => calls.push(`${Date.now() - t0} end ${n}`)); return p; };
void origRegister;
const stack = await startStack(env, queue, prefix, async (job) => {
  const due = (job.data as { due: number }).due;
  rows.push([due - t0, Date.now() - due, Date.now() - t0]);
}, 15000);
const timestamp = Date.now();
const jobs = Array.from({ length: 1000 }, (_, i) => {
  const due = timestamp + 1000 + Math.floor((i * 10000) / 1000);
  return { name: "late", data: { due }, opts: { timestamp, delay: due - timestamp } };
});
await new Queue(queue, { redis: env.fastRedis, prefix }).addBulk(jobs);
await stack.lambda.invoke("sweeper", { source: "bench" });
const origInvoke = stack.lambda.invoke;
await waitUntil(() => rows.length >= 1000, 30000, 5);
const late = rows.filter((r) => r[1] > 100);
console.log("late count", late.length);
console.log(calls.join("\n"));
console.log(late.slice(0, 40).map((r) => `due+${r[0]} late ${r[1]} ran@${r[2]}`).join("\n"));
await stack.stop();
await stopBenchEnv(env);
process.exit(0);
