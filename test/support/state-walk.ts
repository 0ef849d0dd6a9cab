/**
 * Walks every state structure of a queue and says where each job id is, to check that a job is in
 * exactly one place whatever happened to the calls that moved it.
 */
import type { Redis as IORedis } from "ioredis";
import { keysUnder } from "./stack.ts";

async function placesOfJobs(direct: IORedis, queuePrefix: string): Promise<Map<string, string[]>> {
  const places = new Map<string, string[]>();
  const note = (id: string, where: string) => places.set(id, [...(places.get(id) ?? []), where]);
  for (const list of ["wait", "active", "paused"]) {
    for (const id of await direct.lrange(`${queuePrefix}:${list}`, 0, -1)) note(id, list);
  }
  for (const set of ["prioritized", "delayed", "completed", "failed", "waiting-children"]) {
    for (const id of await direct.zrange(`${queuePrefix}:${set}`, 0, -1)) note(id, set);
  }
  // Grouped jobs (docs/groups.md): ready in their group's ZSET, or in nimbusq's grouped delayed set.
  const groupSets = (await keysUnder(direct, `${queuePrefix}:nq`)).filter(
    (key) => key.startsWith(`${queuePrefix}:nq:g:`) || key === `${queuePrefix}:nq:gdelayed`,
  );
  for (const key of groupSets) {
    for (const id of await direct.zrange(key, 0, -1)) note(id, key.slice(queuePrefix.length + 4));
  }
  for (const id of await direct.lrange(`${queuePrefix}:nq:ginbox`, 0, -1)) note(id, "nq:ginbox");
  return places;
}

/** The ids found in more than one place, or in none of the expected ones. */
export async function misplacedJobs(direct: IORedis, queuePrefix: string, ids: string[]): Promise<string[]> {
  const places = await placesOfJobs(direct, queuePrefix);
  const wrong = ids.filter((id) => (places.get(id) ?? []).length !== 1);
  for (const [id, where] of places)
    if (!ids.includes(id) || where.length !== 1) wrong.push(`${id}@${where.join("+")}`);
  return [...new Set(wrong)];
}
