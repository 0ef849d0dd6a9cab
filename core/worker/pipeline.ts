/**
 * One drain as a streaming pipeline: up to `concurrency` attempts run at once and a freed slot takes
 * the next leased job at once; finished jobs are acked in small groups by the same call that leases
 * more (one or two such calls in flight); every job held — queued, running, or finished and not yet
 * acked — has its lease extended until its ack lands. The policy lives here; the rest is WorkerSetup's.
 */
import { RateLimitError } from "../errors.ts";
import type { AckEntry } from "../job/ack-entry.ts";
import { classifyFailure } from "../redis/call-errors.ts";
import { entryBudget } from "./ack-size.ts";
import { type AttemptOptions, runAttempt } from "./attempt.ts";
import { cycleRequest, PruneSchedule, planCall } from "./call-plan.ts";
import { ackDone, type CycleRequest, type CycleResult, tracedCycle } from "./calls.ts";
import type { Held } from "./held.ts";
import { HeldJobs } from "./held-jobs.ts";
import type { Decision, Settled } from "./outcome.ts";
import { StartGate, wakeableSleep } from "./start-gate.ts";
import type { DrainOptions, DrainSummary, StopReason } from "./types.ts";
import {
  ackAnswered,
  decideHeld,
  emptySummary,
  heldFromHandoff,
  leaseHandlers,
  type PipelineSettings,
  prepareLeased,
  reportOutcome,
  type WorkerSetup,
} from "./worker-setup.ts";

export class Pipeline {
  private readonly jobs = new HeldJobs();
  private readonly gate = new StartGate(() => this.wake());
  private candidates: string[] = [];
  private readyLeft = true;
  private nextDue = 0;
  private firstCall = true;
  private readonly prunes = new PruneSchedule();
  private inFlight = 0;
  /** Calls sent; an answer older than the one applied never overrides it. */
  private sent = 0;
  private applied = 0; // the latest sent call whose answer was applied
  /** Candidates handed to calls in flight: no other call gets them. */
  private readonly assigned = new Set<string>();
  private stopReason: StopReason | undefined;
  /** Leased jobs still waiting for a slot go back instead of starting (paused, RateLimitError). */
  private handBackQueued = false;
  /** The queue was at its global concurrency: lease again only once one of ours has been acked. */
  private maxed = false;
  private lookedAt = 0; // when the loop's current turn began: dueNow's clock
  private firstDoneAt = 0;
  private failure: unknown;
  private wake: () => void = () => {};
  private readonly summary: DrainSummary = emptySummary();
  private readonly deadline: number;
  private readonly reserveMs: number;
  private rateLimitedUntil = 0;
  private readonly settings: PipelineSettings;
  private readonly attemptOptions: AttemptOptions;

  constructor(
    private readonly setup: WorkerSetup,
    private readonly options: DrainOptions,
  ) {
    this.settings = setup.settings;
    this.deadline = options.deadline ?? Number.POSITIVE_INFINITY;
    this.attemptOptions = { ...setup.attempt, deadline: this.deadline };
    const { leaseMs, jobTimeoutMs } = this.settings;
    this.reserveMs = options.reserveMs ?? Math.min(leaseMs, jobTimeoutMs ?? leaseMs) / 10;
    // What an earlier drain decided but could not ack goes out with this drain's first call.
    this.jobs.done.push(...setup.carried.splice(0));
  }

  private now(): number {
    return this.setup.context.clock();
  }

  private canStart(): boolean {
    if (this.options.signal?.aborted || this.handBackQueued) return false;
    return this.now() + this.reserveMs < this.deadline;
  }

  async run(): Promise<DrainSummary> {
    const { leaseMs } = this.settings;
    const handed = this.options.handedOver ?? []; // leased by the add that started this drain
    if (handed.length > 0) {
      [this.firstCall, this.readyLeft, this.summary.leased] = [false, false, handed.length];
      this.jobs.queued.push(...(await heldFromHandoff(this.setup, handed)));
    }
    const extender = setInterval(() => void this.extend(), Math.max(50, Math.floor(leaseMs / 6)));
    const onAbort = () => this.wake();
    this.options.signal?.addEventListener("abort", onAbort);
    try {
      for (;;) {
        // One instant per turn: nextRequest and finished agree on whether a job is due.
        this.lookedAt = this.now();
        if (this.failure !== undefined) return await this.fail(this.failure);
        this.startJobs();
        if (this.inFlight < this.settings.maxCallsInFlight) {
          const next = this.nextRequest();
          if (next) {
            this.launch(next.request, next.acked);
            continue;
          }
          if (this.inFlight === 0 && this.jobs.count === 0 && this.finished()) break;
        }
        await this.nextEvent();
      }
    } finally {
      clearInterval(extender);
      this.options.signal?.removeEventListener("abort", onAbort);
    }
    const summary = { ...this.summary, stoppedBecause: this.stopReason ?? "empty" };
    if (summary.stoppedBecause === "empty" && this.nextDue > 0) summary.nextDueAt = this.nextDue;
    if (summary.stoppedBecause === "rate-limited") summary.nextDueAt = this.rateLimitedUntil;
    return summary;
  }

  /**
   * A call failed for good: running attempts are stopped (job.signal fires) and awaited, then it
   * rejects. After a transient failure (Redis unreachable for the whole retry window) what it held —
   * results, stopped and unstarted jobs handed back — goes to the worker, whose next drain acks it
   * first; after a final one it is left to the stalled check, as after a crash.
   */
  private async fail(error: unknown): Promise<never> {
    for (const held of this.jobs.running) held.stop?.({ kind: "lost" });
    while (this.jobs.running.size > 0 || this.inFlight > 0) await this.nextEvent();
    for (const held of this.jobs.queued.splice(0)) this.finish(held, { kind: "handed-back" });
    if (classifyFailure(error).transient) this.setup.carried.push(...this.jobs.acking, ...this.jobs.done);
    throw error;
  }

  /** Nothing more to lease: stopped, or the last call saw no ready job and nothing due. */
  private finished(): boolean {
    if (this.options.signal?.aborted) this.stopReason ??= "aborted";
    if (!this.canStart()) this.stopReason ??= "deadline";
    if (this.stopReason) return true;
    if (this.maxed) return true;
    if (this.readyLeft || this.dueNow()) return false;
    this.setup.emit("drained");
    return true;
  }

  private dueNow(): boolean {
    return this.nextDue > 0 && this.nextDue <= this.lookedAt;
  }

  /** Resolves when a job finishes, a call lands, the signal fires, or the ack group's wait is up. */
  private nextEvent(): Promise<void> {
    const now = this.now();
    let wait = 1000;
    // A job coming due wakes a drain with a free slot, not the next finish, landing or second.
    const free = this.jobs.running.size + this.jobs.queued.length < this.settings.concurrency;
    if (this.nextDue > now && free) wait = Math.min(wait, this.nextDue - now);
    if (this.jobs.done.length > 0 && this.inFlight < this.settings.maxCallsInFlight)
      wait = Math.min(wait, this.firstDoneAt + this.settings.ackWaitMs - now);
    if (this.jobs.queued.length > 0) wait = Math.min(wait, this.deadline - this.reserveMs - now);
    return wakeableSleep(wait, (wake) => {
      this.wake = wake;
    });
  }

  /**
   * Starts queued jobs while slots are free. The event loop gets a turn between starts that held it
   * (StartGate), and no job starts while a held lease is past half its life: the extension goes first
   * and a job it reports lost is dropped — a late lease answer never starts a job another worker took.
   */
  private startJobs(): void {
    if (!this.canStart()) {
      for (const held of this.jobs.queued.splice(0)) this.finish(held, { kind: "handed-back" });
      return;
    }
    const { concurrency, leaseMs } = this.settings;
    while (this.jobs.running.size < concurrency && this.jobs.queued.length > 0) {
      const now = this.now();
      if (this.gate.mustYield(now)) return;
      if (this.jobs.oldestLock(now) >= leaseMs / 2) {
        if (!this.jobs.extending && this.gate.mayExtend(now)) void this.extend();
        return;
      }
      const held = this.jobs.queued.shift() as Held;
      held.startedAt = now;
      this.gate.started(now);
      this.jobs.running.add(held);
      this.setup.emit("active", held.job, "waiting");
      void runAttempt(held.job, this.attemptOptions, (stop) => {
        held.stop = stop;
      }).then((settled) => {
        this.jobs.running.delete(held);
        this.finish(held, settled);
      });
    }
  }

  private finish(held: Held, settled: Settled): void {
    if (held.startedAt !== undefined) this.gate.attemptTook(this.now() - held.startedAt);
    if (!held.lost) {
      decideHeld(this.setup, held, settled);
      if (settled.kind === "threw" && settled.error instanceof RateLimitError && !held.job.groupRateLimited) {
        this.stopReason ??= "rate-limited";
        this.handBackQueued = true;
        this.rateLimitedUntil = this.now();
      }
      if (held.decision?.entry) {
        if (this.jobs.done.length === 0) this.firstDoneAt = this.now();
        this.jobs.done.push(held);
      } else {
        reportOutcome(this.setup.emit, held.job, held.decision as Decision, this.summary);
      }
    }
    this.wake();
  }

  private nextRequest(): { request: CycleRequest; acked: Held[] } | undefined {
    const settings = this.settings;
    // A second call in flight leases only candidates the first was not given (none before the first
    // answer): without them it could only take nothing.
    const available = this.candidates.filter((id) => !this.assigned.has(id));
    const leasing =
      !this.stopReason &&
      !this.maxed &&
      this.canStart() &&
      (this.inFlight === 0 || available.length > 0) &&
      (this.readyLeft || this.dueNow() || this.firstCall);
    const stopping = this.stopReason !== undefined || !this.canStart();
    const counts = {
      queued: this.jobs.queued.length,
      running: this.jobs.running.size,
      done: this.jobs.done.length,
      oldestDoneWaitedMs: this.now() - this.firstDoneAt,
      averageAttemptMs: this.gate.averageAttemptMs,
    };
    const plan = planCall(settings, counts, leasing, stopping);
    if (!plan) return undefined;
    const entries = plan.ack ? this.jobs.takeForAck(entryBudget(settings.maxRequestBytes)) : [];
    if (entries.length > 0) this.firstDoneAt = this.now();
    // A drain's last ack also prunes, so removeOnComplete/removeOnFail counts hold when it ends.
    const last = plan.count === 0 && this.jobs.done.length === 0 && this.jobs.count === entries.length;
    this.prunes.note(entries.map((held) => held.decision?.entry));
    const open =
      this.firstCall ||
      this.dueNow() ||
      (plan.count > 0 && this.inFlight === 0 && this.candidates.length === 0) ||
      this.prunes.due(last, settings.pruneEveryCalls);
    const request = cycleRequest(settings, {
      token: this.setup.nextToken(),
      count: plan.count,
      // Calls in flight get disjoint candidates, from a peek deep enough for all of them.
      candidates: available.slice(0, plan.count),
      open,
      prunes: this.prunes.text(),
      entries: entries.map((held) => held.decision?.entry as AckEntry),
      unregister: last && this.inFlight === 0 ? this.options.unregister?.() : undefined,
    });
    return { request, acked: entries };
  }

  private launch(request: CycleRequest, acked: Held[]): void {
    const sequence = ++this.sent;
    this.inFlight += 1;
    this.firstCall = false;
    for (const id of request.candidates) this.assigned.add(id);
    const sentAt = this.now();
    this.prunes.sent(request.open);
    void tracedCycle(this.setup.context, request)
      .then((result) => this.land(acked, result, sentAt, sequence))
      .catch((error: unknown) => {
        this.failure = error;
      })
      .finally(() => {
        this.inFlight -= 1;
        for (const id of request.candidates) this.assigned.delete(id);
        this.wake();
      });
  }

  private async land(acked: Held[], result: CycleResult, sentAt: number, sequence: number): Promise<void> {
    const now = this.now();
    for (const [i, held] of acked.entries()) {
      this.jobs.acking.delete(held);
      if (ackAnswered(this.setup, held, result.codes[i] ?? 0, this.summary)) this.jobs.done.push(held);
    }
    if (result.unregistered) this.summary.unregistered = true;
    if (sequence > this.applied) {
      this.applied = sequence;
      this.readyLeft = result.readyLeft;
      this.nextDue = result.nextDue;
      this.candidates = result.peeked;
    }
    if (result.status === "paused") {
      this.stopReason ??= "paused";
      this.handBackQueued = true;
    }
    // At the global concurrency: lease again once one of ours is acked (freeing a slot), or stop.
    const freed = result.codes.some((code) => code === ackDone);
    this.maxed = result.status === "maxed" || (this.maxed && !freed);
    if (result.status === "rate-limited") {
      this.stopReason ??= "rate-limited";
      this.rateLimitedUntil = now + result.info;
    }
    if (result.jobs.length === 0) return;
    this.summary.leased += result.jobs.length;
    const jobs = await prepareLeased(this.setup, result.jobs);
    // Their locks were set while the call ran: count the lease from when it was sent.
    for (const job of jobs) this.jobs.queued.push({ job, lockedAt: sentAt });
  }

  /** Extends every held lock older than a third of the lease, in one call; stops jobs whose lease is lost. */
  private async extend(): Promise<void> {
    try {
      await this.jobs.extend(this.now(), this.settings.leaseMs, leaseHandlers(this.setup, this.summary));
    } catch (error) {
      this.gate.extendFailed(this.now());
      this.setup.emit("error", error as Error);
    } finally {
      this.wake();
    }
  }
}
