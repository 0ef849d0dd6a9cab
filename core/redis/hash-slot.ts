/**
 * Redis Cluster runs a script on one node and stops it half-way at a key another node serves (Redis 7,
 * for scripts with a shebang, at any key of a second slot) — after whatever it already wrote, since
 * scripts never roll back. So every queue a script may write besides
 * its own (a dead-letter queue, a flow parent or child in another queue) must share the source queue's
 * slot. What puts keys in one slot is a hash tag: a key's slot is computed from the text between its
 * first `{` and the next `}` when that is not empty, else from the whole key. A queue's keys share a
 * slot only when its key prefix carries a tag (`{tag}` in the prefix: queue names may hold no braces);
 * an untagged queue's keys already span slots, so on a cluster every queue needs a tagged prefix (the
 * README says so) and nothing is refused for untagged sources — Upstash's non-cluster databases run them.
 *
 * These checks compare tags, never slots: they run where targets are configured (Worker's deadLetter,
 * a job's deadLetter and parent, flow nodes), so a mismatch is a ValidationError naming the option,
 * not a script stopped mid-ack.
 */

import type { DeadLetterOptions, JobsOptions } from "../types.ts";
import type { Checker } from "../validate.ts";
import { queueKeyPrefix, queueOfQualified } from "./keys.ts";
import type { ShardMap } from "./shard-map.ts";

/** The hash tag that places every key starting with `keyPrefix` in one slot, or undefined if none does. */
export function hashTagOf(keyPrefix: string): string | undefined {
  const open = keyPrefix.indexOf("{");
  if (open < 0) return undefined;
  const close = keyPrefix.indexOf("}", open + 1);
  // `{}` (or no `}` at all) leaves the slot to the whole key: keys of such a prefix spread over slots.
  if (close <= open + 1) return undefined;
  return keyPrefix.slice(open + 1, close);
}

/**
 * The hash tag the keys under `targetKeyPrefix` must carry to be written by scripts of the queue keyed
 * `sourceKeyPrefix` on a Redis Cluster, or undefined when they already do (or when the source is
 * untagged: its own keys span slots, so no target is refused).
 */
export function requiredTag(sourceKeyPrefix: string, targetKeyPrefix: string): string | undefined {
  const tag = hashTagOf(sourceKeyPrefix);
  return tag === undefined || hashTagOf(targetKeyPrefix) === tag ? undefined : tag;
}

const why = "so that both queues share one Redis Cluster hash slot (a script cannot write two slots)";

/**
 * A dead-letter queue `{ queue, prefix }` of the queue `source`: the failing job's ack writes it. Only a
 * prefix of its own can give it another tag (queue names hold no braces), so `field` is that prefix's.
 */
export function checkDeadLetterSlot(
  check: Checker,
  field: string,
  source: { prefix: string; queueName: string },
  deadLetter: DeadLetterOptions,
): void {
  const prefix = deadLetter.prefix ?? source.prefix;
  const tag = requiredTag(
    queueKeyPrefix(source.prefix, source.queueName),
    queueKeyPrefix(prefix, deadLetter.queue),
  );
  if (tag !== undefined)
    check.fail(field, `a prefix with the hash tag {${tag}} of the source queue's prefix, ${why}`, prefix);
}

/**
 * A parent link: a child's ack writes its parent, removing or cleaning a parent writes its children,
 * and an add writes both, so a tag on either side binds the other. `field` names what the error is
 * about (`what`: "a queue", "a prefix"), `shown` is what it quotes.
 */
export function checkParentSlot(
  check: Checker,
  field: string,
  what: string,
  keyPrefixes: { child: string; parent: string },
  shown: string,
): void {
  const { child, parent } = keyPrefixes;
  const tag = requiredTag(child, parent) ?? requiredTag(parent, child);
  if (tag !== undefined)
    check.fail(field, `${what} with the hash tag {${tag}}, as the linked queue's prefix has, ${why}`, shown);
}

/** A job's own targets, checked at add: its `deadLetter` and its `parent` (`<prefix>:<queue>` of it). */
export function checkJobTargets(
  check: Checker,
  field: string,
  source: { prefix: string; queueName: string; shards?: ShardMap | undefined },
  opts: Pick<JobsOptions, "deadLetter" | "parent">,
): void {
  const { deadLetter, parent } = opts;
  const { shards, queueName } = source;
  if (shards && deadLetter?.queue)
    shards.checkSameDatabase(check, `${field}opts.deadLetter.queue`, queueName, deadLetter.queue);
  if (shards && parent)
    shards.checkSameDatabase(check, `${field}opts.parent.queue`, queueName, queueOfQualified(parent.queue));
  if (deadLetter) checkDeadLetterSlot(check, `${field}opts.deadLetter.prefix`, source, deadLetter);
  if (parent) {
    const child = queueKeyPrefix(source.prefix, source.queueName);
    checkParentSlot(
      check,
      `${field}opts.parent.queue`,
      "a queue",
      { child, parent: `${parent.queue}:` },
      parent.queue,
    );
  }
}

/** A flow node in the queue `node` (`<prefix>:<queue>`) under `parent`; `field` is the node's path. */
export function checkFlowNodeSlot(
  check: Checker,
  field: string,
  node: string,
  parent: { queue: string } | undefined,
): void {
  if (!parent) return;
  checkParentSlot(
    check,
    `${field}prefix`,
    "a prefix",
    { child: `${node}:`, parent: `${parent.queue}:` },
    node,
  );
}
