/**
 * Many databases, one deployment: a shard map places each queue on one of several Redis databases
 * (several Upstash databases, or any mix of REST and TCP clients). A queue is placed by name where
 * the map pins it, else by rendezvous hashing of its name over the databases' names — stable for a
 * given list, and adding a database moves only the unpinned queues that now rank it first (pin a
 * queue that already holds jobs before adding one: its keys stay where they were written).
 *
 * Every key of a queue lives on its database: Queue, Worker, QueueEvents and FlowProducer take a map
 * as their `redis` and talk to their queue's database. What would write across databases — a flow
 * whose parent and child sit on two, a dead-letter queue on another — is refused where it is
 * configured, with a ValidationError naming the option (as cross-slot targets on a cluster are).
 *
 * @example
 * const shards = new ShardMap({
 *   databases: { main: createRedis({ url: urlA, token: tokenA }), second: createRedis({ url: urlB, token: tokenB }) },
 *   queues: { email: "main" },
 * });
 * const queue = new Queue("email", { redis: shards });
 */

import { ValidationError } from "../errors.ts";
import type { Checker } from "../validate.ts";
import { queueNameProblem } from "./names.ts";
import { isClient, type RedisPort, type UpstashRedisLike } from "./redis-port.ts";

export type ShardClient = UpstashRedisLike | RedisPort;

/** What a Queue, Worker, QueueEvents or FlowProducer takes as `redis`: a client, a port or a shard map. */
export type RedisOption = UpstashRedisLike | RedisPort | ShardMap;

export interface ShardMapOptions {
  /** The databases by name (lowercase letters, digits, `_`; up to 32): a client or port each. */
  databases: Record<string, ShardClient>;
  /** Queues pinned to a database by name; every other queue goes where the hash of its name says. */
  queues?: Record<string, string>;
}

/** A database's name: lowercase letters, digits and `_`, from a letter, up to 32 (its env suffix). */
export const databaseName = /^[a-z][a-z0-9_]{0,31}$/;
const brand = Symbol.for("nimbusq.shardMap");

/**
 * FNV-1a over the UTF-16 code units, then MurmurHash3's 32-bit finalizer (FNV alone mixes the last
 * characters poorly, which skews a rendezvous choice): the same number in every runtime.
 */
function score(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

export class ShardMap {
  readonly [brand] = true;
  private readonly clients: Map<string, ShardClient>;
  private readonly pins: Map<string, string>;
  /** Where each queue asked about lives (the map never changes): the hash runs once per name. */
  private readonly placed = new Map<string, string>();

  constructor(options: ShardMapOptions) {
    const context = "ShardMap";
    if (typeof options !== "object" || options === null)
      throw new ValidationError("options", "an object { databases, queues? }", context);
    const { databases, queues = {} } = options;
    if (typeof databases !== "object" || databases === null || Object.keys(databases).length === 0)
      throw new ValidationError("databases", "an object naming at least one database", context);
    this.clients = new Map();
    for (const [name, client] of Object.entries(databases)) {
      if (!databaseName.test(name))
        throw new ValidationError(`databases.${name}`, "named by lowercase letters, digits and _", context);
      if (!isClient(client))
        throw new ValidationError(`databases.${name}`, "a Redis client (createRedis) or port", context);
      this.clients.set(name, client);
    }
    if (typeof queues !== "object" || queues === null)
      throw new ValidationError("queues", "an object mapping queue names to database names", context);
    this.pins = new Map();
    for (const [queue, database] of Object.entries(queues)) {
      const problem = queueNameProblem(queue);
      if (problem) throw new ValidationError(`queues.${queue}`, `keyed by a queue name: ${problem}`, context);
      if (!this.clients.has(database))
        throw new ValidationError(
          `queues.${queue}`,
          `one of the databases (${this.names.join(", ")})`,
          context,
        );
      this.pins.set(queue, database);
    }
  }

  /** The databases' names, in the order given. */
  get names(): string[] {
    return [...this.clients.keys()];
  }

  /** The database a queue lives on: its pin, else the name ranking highest for it. */
  databaseOf(queue: string): string {
    const known = this.pins.get(queue) ?? this.placed.get(queue);
    if (known !== undefined) return known;
    let best = "";
    let bestScore = -1;
    for (const name of this.clients.keys()) {
      const rank = score(`${name}\u0000${queue}`);
      if (rank > bestScore) [best, bestScore] = [name, rank];
    }
    // Bounded: names come from requests too, and recomputing one is cheap.
    if (this.placed.size >= 10_000) this.placed.clear();
    this.placed.set(queue, best);
    return best;
  }

  /** The client of the queue's database. */
  redisFor(queue: string): ShardClient {
    return this.clients.get(this.databaseOf(queue)) as ShardClient;
  }

  /** The client of a database by name. */
  database(name: string): ShardClient {
    const client = this.clients.get(name);
    if (!client) throw new ValidationError("database", `one of ${this.names.join(", ")}`, "ShardMap");
    return client;
  }

  /**
   * Refuses a link from `queue` to `target` (a dead-letter queue, a flow parent or child) across
   * databases: the script that writes both runs on one. `field` names the option.
   */
  checkSameDatabase(check: Checker, field: string, queue: string, target: string): void {
    const from = this.databaseOf(queue);
    const to = this.databaseOf(target);
    if (from !== to)
      check.fail(
        field,
        `a queue on the same database as "${queue}" (${from}), not "${target}" on ${to}: pin both to one database in the shard map`,
      );
  }
}

export function isShardMap(value: unknown): value is ShardMap {
  return typeof value === "object" && value !== null && (value as { [brand]?: true })[brand] === true;
}
