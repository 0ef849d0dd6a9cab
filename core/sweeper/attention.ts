/**
 * The sweeper's attention index (`<prefix>:nq:due`, core/redis/keys.ts): which queues need a pass
 * now and when the next one will. The scripts that change a queue note it (an add, a worker call, a
 * retry, a scheduler's next run…); each sweep writes back the queue's own next due time, or takes it
 * out. So an idle deployment's pass is one read, whatever the number of queues.
 */

import { decodeReadAttention, readAttention as readAttentionScript } from "../redis/generated/scripts.ts";
import { attentionKey } from "../redis/keys.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { runScript } from "../redis/scripts.ts";

/** Queue name → when it needs a look (ms). One billed command (two through a port without ZRANGE). */
export async function readAttention(port: RedisPort, prefix: string): Promise<Map<string, number>> {
  const key = attentionKey(prefix);
  const flat = port.zrangeWithScores
    ? await port.zrangeWithScores(key)
    : decodeReadAttention(await runScript(port, readAttentionScript, { attention: key }, {})).entries;
  const scores = new Map<string, number>();
  for (let i = 0; i + 1 < flat.length; i += 2) scores.set(String(flat[i]), Number(flat[i + 1]));
  return scores;
}

/**
 * The queues a pass sweeps: every configured queue on the container's first pass (state written before
 * the index existed, or by BullMQ producers, which do not note the index) and for `watch: "always"`
 * queues on every pass; otherwise those whose entry is due.
 */
export function queuesToSweep(
  queues: readonly { name: string; watch?: "index" | "always" }[],
  scores: ReadonlyMap<string, number>,
  now: number,
  everything: boolean,
): string[] {
  return queues
    .filter(
      (q) => everything || q.watch === "always" || (scores.get(q.name) ?? Number.POSITIVE_INFINITY) <= now,
    )
    .map((q) => q.name);
}

/** The earliest entry of a configured queue that this pass did not sweep, if any. */
export function nextUnswept(
  queues: readonly { name: string }[],
  scores: ReadonlyMap<string, number>,
  swept: ReadonlySet<string>,
): number | undefined {
  let next: number | undefined;
  for (const { name } of queues) {
    const at = scores.get(name);
    if (at === undefined || swept.has(name)) continue;
    if (next === undefined || at < next) next = at;
  }
  return next;
}
