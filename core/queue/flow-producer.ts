/**
 * Adds trees of jobs whose parents wait (in `waiting-children`) until their children finish.
 * Children may live in other queues. Each call is all or nothing and replay-safe: one script call
 * while the trees fit one, else staged and made visible by one commit (core/adds/staged-add.ts), so a
 * parent never waits on part of its children.
 */

import { writeJobs, writeSettings } from "../adds/add-jobs.ts";
import type { NewJob } from "../adds/add-types.ts";
import type { Job } from "../job/job.ts";
import { checkFlowNodeSlot } from "../redis/hash-slot.ts";
import { defaultPrefix, queueOfQualified } from "../redis/keys.ts";
import { checkRedisOptions, Lifecycle, redisPortFrom } from "../redis/lifecycle.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import type { RedisRetryOptions } from "../redis/retry.ts";
import { isShardMap, type RedisOption, type ShardMap } from "../redis/shard-map.ts";
import { type Telemetry, tracedFlows } from "../telemetry/telemetry.ts";
import type { FlowJob, JobsOptions } from "../types.ts";
import { Checker, checkQueueName } from "../validate.ts";
import { Queue } from "./queue.ts";

export interface FlowProducerOptions {
  redis: RedisOption;
  /**
   * How long transient Redis failures (a restart, a failover, a 5xx, a lost answer) are retried with
   * the same request before a call fails (`windowMs`, default 30 000; 0: the client's own retries
   * only), and never past `deadline()` (epoch ms). See core/redis/retry.ts.
   */
  retry?: RedisRetryOptions;
  prefix?: string;
  maxDataBytes?: number;
  replayGuardTtlMs?: number;
  streams?: { events?: { maxLen?: number } };
  /**
   * The queue's events level, as its workers' (WorkerOptions.events): "all" (default) writes BullMQ's
   * add events (added, waiting, delayed…); "final" and "none" write none of them.
   */
  events?: "all" | "final" | "none";
  clock?: () => number;
  /** Tracing: an `addFlow <queue>` or `addBulkFlows` span per call (BullMQ's Telemetry shape, telemetry.ts). */
  telemetry?: Telemetry;
}

/** A written tree: each node's job and its children's nodes. */
export interface JobNode {
  job: Job;
  children?: JobNode[];
}

/**
 * BullMQ's second argument of `FlowProducer.add`: per queue name, the default job options its nodes
 * get under their own `opts` (over this producer's `defaultJobOptions`).
 */
export interface FlowOpts {
  queuesOptions?: Record<string, { defaultJobOptions?: JobsOptions }>;
}

interface Planned {
  newJob: NewJob;
  queue: Queue;
  children: Planned[];
}

/**
 * @example
 * const flow = new FlowProducer({ redis });
 * await flow.add({ name: "report", queueName: "reports", children: [
 *   { name: "part", queueName: "parts", data: { n: 1 } },
 * ] });
 */
export class FlowProducer {
  /** The port of each database written to (one, "", without a shard map). */
  private readonly ports = new Map<string, RedisPort>();
  private readonly shards: ShardMap | undefined;
  private readonly queues = new Map<string, Queue>();
  private readonly lifecycle = new Lifecycle("FlowProducer");

  constructor(private readonly options: FlowProducerOptions) {
    this.shards = isShardMap(options.redis) ? options.redis : undefined;
    // The options are checked now, not at the first add (a port per database is made when first used).
    if (this.shards) checkRedisOptions(options, "FlowProducer");
    else this.portOf("");
  }

  /** The guarded port of a database of the shard map (by a queue on it), or of the one client. */
  private portOf(database: string, queue?: string): RedisPort {
    let port = this.ports.get(database);
    if (!port) {
      const extra = { signal: this.lifecycle.closingSignal };
      port = this.lifecycle.guard(redisPortFrom(this.options, "FlowProducer", extra, queue));
      this.ports.set(database, port);
    }
    return port;
  }

  /** BullMQ's `close()`: idempotent; afterwards every call is refused with a ClosedError. */
  close(): Promise<void> {
    return this.lifecycle.close();
  }

  private queue(name: string, prefix: string): Queue {
    const key = `${prefix}\u0000${name}`;
    let queue = this.queues.get(key);
    if (!queue) {
      // With a shard map, the Queue finds its own database (and checks its jobs' links against it).
      const redis = this.shards ? this.options.redis : this.portOf("");
      queue = new Queue(name, { ...this.options, redis, prefix });
      this.queues.set(key, queue);
    }
    return queue;
  }

  private plan(
    node: FlowJob,
    field: string,
    now: number,
    defaults: FlowOpts["queuesOptions"],
    parent?: { id: string; queue: string },
  ): Planned {
    const check = new Checker("FlowProducer: add");
    if (typeof node !== "object" || node === null)
      check.fail(field || "flow", "an object { name, queueName, … }", node);
    checkQueueName(node.queueName, check.context, `${field}queueName`);
    const children = node.children ?? [];
    if (!Array.isArray(children)) check.fail(`${field}children`, "an array", children);
    const queue = this.queue(node.queueName, node.prefix ?? this.options.prefix ?? defaultPrefix);
    checkFlowNodeSlot(check, field, queue.qualifiedName, parent);
    if (parent)
      this.shards?.checkSameDatabase(
        check,
        `${field}queueName`,
        queueOfQualified(parent.queue),
        node.queueName,
      );
    const byQueue = defaults?.[node.queueName]?.defaultJobOptions;
    const opts = { ...byQueue, ...node.opts } as JobsOptions & Record<string, unknown>;
    if ("parent" in opts) check.fail(`${field}opts.parent`, "left out (a flow sets parents itself)");
    if (children.length > 0 && opts.deduplication) {
      check.fail(`${field}opts.deduplication`, "left out on a node that has children (BullMQ refuses it)");
    }
    if (parent) opts.parent = parent;
    const newJob = queue.prepare(node.name, node.data, opts, field, now);
    // Flow nodes without a jobId get a UUID v4, as in BullMQ, so children can name their parent.
    if (!newJob.customId) {
      newJob.customId = crypto.randomUUID();
      newJob.generatedId = true;
    }
    newJob.opts = { ...newJob.opts };
    if (children.length > 0) newJob.placement = "waiting-children";
    const self = { id: newJob.customId, queue: queue.qualifiedName };
    return {
      newJob,
      queue,
      children: children.map((child, i) => this.plan(child, `${field}children[${i}].`, now, defaults, self)),
    };
  }

  /** The port the trees are written through: all of them on one database (one atomic call or commit). */
  private portOfTrees(plans: Planned[]): RedisPort {
    if (!this.shards) return this.portOf("");
    const roots = plans.map((plan) => plan.queue.name);
    const first = roots[0] as string;
    const check = new Checker("FlowProducer: addBulk");
    for (const [i, root] of roots.entries())
      this.shards.checkSameDatabase(check, `flows[${i}].queueName`, first, root);
    return this.portOf(this.shards.databaseOf(first), first);
  }

  private flattenPlan(plan: Planned, out: NewJob[]): void {
    out.push(plan.newJob);
    for (const child of plan.children) this.flattenPlan(child, out);
  }

  private toNode(plan: Planned, ids: Map<NewJob, string>): JobNode {
    const job = plan.queue.jobFromNew(plan.newJob, ids.get(plan.newJob) as string);
    const children = plan.children.map((child) => this.toNode(child, ids));
    return children.length > 0 ? { job, children } : { job };
  }

  /** Adds one tree atomically; returns it with each node's job. `opts.queuesOptions` as BullMQ's. */
  async add(flow: FlowJob, opts?: FlowOpts): Promise<JobNode> {
    const [node] = await this.addTrees([flow], checkFlowOpts(opts));
    return node as JobNode;
  }

  /** Adds several trees in one call. */
  addBulk(flows: FlowJob[]): Promise<JobNode[]> {
    return this.addTrees(flows, undefined);
  }

  private async addTrees(flows: FlowJob[], defaults: FlowOpts["queuesOptions"]): Promise<JobNode[]> {
    const now = this.options.clock?.() ?? Date.now();
    const plans = flows.map((flow, i) =>
      this.plan(flow, flows.length === 1 ? "" : `flows[${i}].`, now, defaults),
    );
    const jobs: NewJob[] = [];
    for (const plan of plans) this.flattenPlan(plan, jobs);
    if (plans.length === 0) return [];
    const port = this.portOfTrees(plans);
    const write = () => writeJobs(port, jobs, writeSettings(this.options, now));
    const outcomes = await tracedFlows(this.options.telemetry, flows, write);
    const ids = new Map(jobs.map((job, i) => [job, (outcomes[i] as { id: string }).id]));
    return plans.map((plan) => this.toNode(plan, ids));
  }
}

/** `queuesOptions`: per queue name, an object of which only `defaultJobOptions` means anything here. */
function checkFlowOpts(opts: FlowOpts | undefined): FlowOpts["queuesOptions"] {
  if (opts === undefined) return undefined;
  const check = new Checker("FlowProducer: add");
  if (typeof opts !== "object" || opts === null) check.fail("opts", "an object { queuesOptions }", opts);
  for (const key of Object.keys(opts))
    if (key !== "queuesOptions") check.fail(`opts.${key}`, "left out (only queuesOptions)");
  const byQueue = opts.queuesOptions;
  if (byQueue === undefined) return undefined;
  if (typeof byQueue !== "object" || byQueue === null)
    check.fail("opts.queuesOptions", "an object keyed by queue name", byQueue);
  for (const [name, queueOpts] of Object.entries(byQueue)) {
    const field = `opts.queuesOptions.${name}`;
    if (typeof queueOpts !== "object" || queueOpts === null)
      check.fail(field, "an object { defaultJobOptions }", queueOpts);
    for (const key of Object.keys(queueOpts)) {
      if (key !== "defaultJobOptions")
        check.fail(`${field}.${key}`, "left out (a flow's jobs take only defaultJobOptions from here)");
    }
  }
  return byQueue;
}
