/**
 * Every key an ackAndLease call may touch beyond the queue's own, so the call can run under Upstash's
 * key-based locking (`allow-key-locking`: an undeclared key is an error). Derived from what the
 * worker already knows: each acked job's id, parent, deduplication id and dead-letter target, and
 * the ids the previous call peeked, and the keys of acked jobs' groups.
 */

import type { AckEntry } from "../job/ack-entry.ts";
import { groupJobsKey, groupKeys, jobSubKeys } from "../redis/keys.ts";

/** The parent queue's structures that finishing a child may move its parent between. */
const parentQueueSuffixes = [
  "failed",
  "waiting-children",
  "delayed",
  "wait",
  "meta",
  "active",
  "marker",
  "events",
  "prioritized",
  "pc",
  // A grouped parent goes to nimbusq's grouped delayed set or its queue's group inbox (docs/groups.md).
  "nq:gdelayed",
  "nq:ginbox",
] as const;

const deadLetterQueueSuffixes = ["events", "wait", "marker"] as const;

/** Keys one ack entry may touch, given the queue's key prefix `{P}`. */
export function ackEntryKeys(queuePrefix: string, entry: AckEntry): string[] {
  const hash = queuePrefix + entry.id;
  const own = jobSubKeys(hash);
  const keys = [hash, own.lock, own.dependencies, own.unsuccessful];
  // Removal at once (removeOnComplete/removeOnFail true) deletes every sub-key.
  if (entry.keepCount === 0) keys.push(own.logs, own.processed, own.failed);
  if (entry.dedupId !== "") keys.push(`${queuePrefix}de:${entry.dedupId}`);
  if (entry.parentKey !== "") {
    const parent = jobSubKeys(entry.parentKey);
    keys.push(entry.parentKey, parent.dependencies, parent.processed, parent.unsuccessful, parent.failed);
    for (const suffix of parentQueueSuffixes) keys.push(entry.parentPrefix + suffix);
  }
  if (entry.deadLetter !== "") {
    keys.push(entry.deadLetter + entry.deadLetterId);
    for (const suffix of deadLetterQueueSuffixes) keys.push(entry.deadLetter + suffix);
  }
  // A grouped job frees its group's slot and may go back to its group (or its delayed set).
  if (entry.group) {
    const group = groupKeys(queuePrefix);
    keys.push(group.running, group.counter, groupJobsKey(queuePrefix, entry.group));
  }
  return keys;
}

/** Keys leasing a peeked job touches: its hash and its lock. */
export function candidateKeys(queuePrefix: string, id: string): string[] {
  const hash = queuePrefix + id;
  return [hash, `${hash}:lock`];
}

/** The `declared` KEYS group of one call, without duplicates. */
export function declaredKeys(
  queuePrefix: string,
  entries: AckEntry[],
  candidates: string[],
): { key: string }[] {
  // The lease looks whether groups have work and when grouped jobs come due (a declared call leases
  // none of them): the queue's group keys, once the queue has had grouped jobs.
  const group = groupKeys(queuePrefix);
  const keys = new Set<string>([group.ring, group.delayed, group.limited, group.inbox]);
  for (const entry of entries) for (const key of ackEntryKeys(queuePrefix, entry)) keys.add(key);
  for (const id of candidates) for (const key of candidateKeys(queuePrefix, id)) keys.add(key);
  return [...keys].map((key) => ({ key }));
}
