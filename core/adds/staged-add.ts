/**
 * Adds too large for one script call, still all or nothing (BullMQ's addBulk and FlowProducer.add are
 * atomic). The jobs are staged in chunks (stageJobs: each new job's hash at its final key with a TTL,
 * its id in staging keys no reader looks at), then one commit (commitStagedJobs) moves every id into
 * its queue's structures in bulk. Until the commit no worker, listing or count sees any job of the
 * add, and a parent never waits on part of its children; a failure before it aborts the staging, and
 * whatever the abort does not reach expires. The add events follow the commit. Every call carries its
 * own replay guard, so a retried request never doubles anything.
 */

import { UnexpectedReplyError } from "../errors.ts";
import {
  abortStagedJobs,
  commitStagedJobs,
  decodeAbortStagedJobs,
  decodeCommitStagedJobs,
  decodeSealStagedJobs,
  decodeStageJobs,
  scriptCodes,
  sealStagedJobs,
  stageJobs,
} from "../redis/generated/scripts.ts";
import { attentionKey, queueKeys, replayGuardKey, stagingKeys } from "../redis/keys.ts";
import type { RedisPort } from "../redis/redis-port.ts";
import { flag, runScript } from "../redis/scripts.ts";
import { Checker } from "../validate.ts";
import {
  addError,
  chunks,
  eventsLevel,
  jobArgs,
  knownJobKey,
  maxUnitsPerStagingCall,
  type QueueTable,
  queueTable,
} from "./add-calls.ts";
import { publishAddEvents } from "./add-events.ts";
import type { AddOutcome, NewJob, WriteSettings } from "./add-types.ts";

/** Most jobs the commit decides one by one (deduplication, existing children linked to a parent). */
export const maxDeferredJobs = 500;
/** Staged hashes the commit persists itself; an add with more seals the rest just before it. */
const maxPersistedByCommit = 1500;
const maxSealedPerCall = 2500;
const abortStepKeys = 4000;

interface Deferred {
  index: number;
  kind: "dedup" | "attach";
  inBatch: boolean;
}

/** One staged add: its keys, the calls it makes, and what they answered. */
class StagedAdd {
  private readonly token = crypto.randomUUID();
  private readonly table: QueueTable;
  private readonly first: NewJob;
  private readonly keys: ReturnType<typeof stagingKeys>;
  readonly outcomes: (AddOutcome | undefined)[];
  private readonly deferred: Deferred[] = [];
  private chunksStaged = 0;
  /** Staged hashes in stagedKeys (auto and generated ids) and in stagedCustomKeys. */
  private readonly staged = { keys: 0, customKeys: 0 };

  constructor(
    private readonly port: RedisPort,
    private readonly jobs: NewJob[],
    private readonly settings: WriteSettings,
  ) {
    this.table = queueTable(jobs);
    this.first = jobs[0] as NewJob;
    this.keys = stagingKeys(this.first.prefix, this.first.queueName, this.token);
    this.outcomes = new Array(jobs.length);
  }

  private guard(step = ""): string {
    return replayGuardKey(this.first.prefix, this.first.queueName, `${this.token}${step}`);
  }

  /** The staging KEYS every staging, commit and abort call declares, with `replayGuard`. */
  private stagingArgs(replayGuard: string) {
    const { stage, stagedKeys, stagedCustomKeys, parents } = this.keys;
    const queues = this.table.queues.map((q, i) => ({
      ...queueKeys(q.prefix, q.queueName),
      ...this.keys.queue(i + 1),
    }));
    return { replayGuard, stage, stagedKeys, stagedCustomKeys, parents, queues };
  }

  /**
   * A custom id met earlier in the same add is that job again: a duplicate, decided here (and, with a
   * parent, linked by the commit). Returns the indexes of the jobs to stage.
   */
  planRepeats(): number[] {
    const firstOf = new Set<string>();
    const toStage: number[] = [];
    for (const [index, job] of this.jobs.entries()) {
      const key = job.generatedId ? undefined : knownJobKey(job);
      if (key === undefined || !firstOf.has(key)) {
        if (key !== undefined) firstOf.add(key);
        toStage.push(index);
        continue;
      }
      this.outcomes[index] = { id: job.customId, outcome: "duplicated" };
      if (job.opts.parent) this.deferred.push({ index, kind: "attach", inBatch: true });
    }
    const dedups = toStage.filter((i) => this.jobs[i]?.opts.deduplication).length;
    this.checkDeferred(dedups);
    return toStage;
  }

  private checkDeferred(count: number): void {
    if (count <= maxDeferredJobs) return;
    new Checker("add").fail(
      "jobs",
      `at most ${maxDeferredJobs} jobs with deduplication or re-adding an existing id under a parent, ` +
        "in an add too large for one call (its commit decides them one by one)",
      `${count} of them`,
    );
  }

  async stage(indexes: number[]): Promise<void> {
    const byJob = new Map(this.jobs.map((job, index) => [job, index]));
    for (const chunk of chunks(
      indexes.map((i) => this.jobs[i] as NewJob),
      maxUnitsPerStagingCall,
    )) {
      this.chunksStaged += 1;
      const reply = decodeStageJobs(
        await runScript(this.port, stageJobs, this.stagingArgs(this.guard(`-s${this.chunksStaged}`)), {
          ttl: this.settings.guardTtlMs,
          jobs: chunk.map((job) => jobArgs(job, this.table.indexOf(job))),
        }),
      );
      if (reply.form === "refused") throw addError(reply.code, chunk[reply.index - 1]);
      if (reply.jobs.length !== chunk.length)
        throw new UnexpectedReplyError(`stageJobs: ${reply.jobs.length} outcomes for ${chunk.length} jobs`);
      for (const [n, job] of chunk.entries()) {
        const index = byJob.get(job) as number;
        const { outcome: code, jobId: id } = reply.jobs[n] as (typeof reply.jobs)[number];
        this.outcomes[index] = { id, outcome: code === 1 || code === 4 ? "created" : "duplicated" };
        if (code === 1 || code === 4)
          this.staged[job.customId && !job.generatedId ? "customKeys" : "keys"] += 1;
        if (code === 4) this.deferred.push({ index, kind: "dedup", inBatch: false });
        if (code === 5) this.deferred.push({ index, kind: "attach", inBatch: false });
        if (code < 1 || code > 5 || code === 3) throw new UnexpectedReplyError(`stageJobs: outcome ${code}`);
      }
    }
    this.deferred.sort((a, b) => a.index - b.index);
    this.checkDeferred(this.deferred.length);
  }

  /**
   * Persists the staged hashes the commit will not, in bounded calls right before it: auto and
   * generated ids first, so that custom ids (which a later add may ask for) are left to the commit as
   * far as its share goes. Answers where the commit starts in each list.
   */
  async seal(): Promise<{ persistFrom: number; persistCustomFrom: number }> {
    const toSeal = Math.max(0, this.staged.keys + this.staged.customKeys - maxPersistedByCommit);
    const persistFrom = Math.min(this.staged.keys, toSeal);
    const persistCustomFrom = toSeal - persistFrom;
    let step = 0;
    for (const [list, end] of [
      [this.keys.stagedKeys, persistFrom],
      [this.keys.stagedCustomKeys, persistCustomFrom],
    ] as const) {
      for (let from = 0; from < end; from += maxSealedPerCall) {
        step += 1;
        const to = Math.min(from + maxSealedPerCall, end) - 1;
        const reply = decodeSealStagedJobs(
          await runScript(
            this.port,
            sealStagedJobs,
            { replayGuard: this.guard(`-p${step}`), stagedKeys: list },
            { from, to, guardTtl: this.settings.guardTtlMs },
          ),
        );
        if (reply.form === "gone") throw addError(reply.code, undefined);
      }
    }
    return { persistFrom, persistCustomFrom };
  }

  async commit(persist: { persistFrom: number; persistCustomFrom: number }): Promise<unknown> {
    const { settings } = this;
    const keys = { ...this.stagingArgs(this.guard()), attention: attentionKey(this.first.prefix) };
    return await runScript(this.port, commitStagedJobs, keys, {
      guardTtl: settings.guardTtlMs,
      now: settings.now,
      maxLenEvents: settings.maxLenEvents,
      events: eventsLevel(settings.events),
      chunks: this.chunksStaged,
      ...persist,
      deferred: this.deferred.map(({ index, kind, inBatch }) => {
        const job = this.jobs[index] as NewJob;
        const args = jobArgs(job, this.table.indexOf(job));
        return {
          ...args,
          kind,
          id: (this.outcomes[index] as AddOutcome).id,
          inBatch: flag(inBatch),
        };
      }),
    });
  }

  /** Applies the commit's answer: the outcome of each deferred job. */
  settle(raw: unknown): void {
    const reply = decodeCommitStagedJobs(raw);
    if (reply.form === "gone") throw addError(reply.code, undefined);
    if (reply.form === "refused") throw addError(reply.code, this.failedJob(reply.code, reply.detail));
    const names = { 1: "created", 2: "duplicated", 3: "deduplicated" } as const;
    for (const [n, { index }] of this.deferred.entries()) {
      const answer = reply.jobs[n];
      const outcome = answer && names[answer.outcome as 1 | 2 | 3];
      if (!answer || !outcome) throw new UnexpectedReplyError(`commitStagedJobs: outcome ${answer?.outcome}`);
      this.outcomes[index] = { id: answer.jobId, outcome };
    }
  }

  /** The job a commit refusal names: a deferred job (parentConflict) or the first child of a parent. */
  private failedJob(code: number, detail: string): NewJob | undefined {
    if (code === scriptCodes.parentConflict) return this.jobs[this.deferred[Number(detail) - 1]?.index ?? -1];
    if (code !== scriptCodes.parentNotFound) return undefined;
    return this.jobs.find(
      (job) => job.opts.parent && `${job.opts.parent.queue}:${job.opts.parent.id}` === detail,
    );
  }

  /**
   * Undoes the staging unless the add committed; answers whether it had committed (a commit whose
   * answer was lost). An abort that fails leaves the rest to the staging's TTL.
   */
  async abort(): Promise<boolean> {
    try {
      for (;;) {
        const reply = decodeAbortStagedJobs(
          await runScript(this.port, abortStagedJobs, this.stagingArgs(this.guard()), {
            count: abortStepKeys,
          }),
        );
        if (reply.form === "committed") return true;
        if (reply.left === 0) return false;
      }
    } catch {
      return false;
    }
  }

  publish(): Promise<void> {
    return publishAddEvents(this.port, this.jobs, this.outcomes as AddOutcome[], this.settings, (step) =>
      this.guard(`-e${step}`),
    );
  }
}

/** Writes an add of more than one call's worth of jobs, all or nothing; outcomes in input order. */
export async function writeStaged(
  port: RedisPort,
  jobs: NewJob[],
  settings: WriteSettings,
): Promise<AddOutcome[]> {
  const add = new StagedAdd(port, jobs, settings);
  const toStage = add.planRepeats();
  let persist: Awaited<ReturnType<StagedAdd["seal"]>>;
  try {
    await add.stage(toStage);
    persist = await add.seal();
  } catch (error) {
    await add.abort();
    throw error;
  }
  let reply: unknown;
  try {
    reply = await add.commit(persist);
  } catch (error) {
    // The answer may be lost after the commit ran: the abort tells, and a replay of the commit answers.
    if (!(await add.abort())) throw error;
    reply = await add.commit(persist);
  }
  try {
    add.settle(reply);
  } catch (error) {
    await add.abort();
    throw error;
  }
  await add.publish();
  return add.outcomes as AddOutcome[];
}
