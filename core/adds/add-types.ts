/**
 * The shapes an add passes between its steps (validated job, settings, outcome), apart from the code
 * that writes them, so the one-call and the staged path share them without importing each other.
 */
import type { EventsLevel, JobsOptions } from "../types.ts";

export type Placement = "wait" | "lifo" | "prioritized" | "delayed" | "waiting-children";

/** A validated job, ready to be written. */
export interface NewJob {
  prefix: string;
  queueName: string;
  /** Custom id, or "" for the next counter value. */
  customId: string;
  /** The custom id was generated here (a flow node's UUID), so it cannot exist yet. */
  generatedId?: boolean;
  name: string;
  data: unknown;
  dataText: string;
  opts: JobsOptions;
  timestamp: number;
  placement: Placement;
  repeatJobKey?: string;
}

/** What one add resolved to. */
export interface AddOutcome {
  id: string;
  /** `created`, `duplicated` (the custom id existed) or `deduplicated` (id is the window's owner). */
  outcome: "created" | "duplicated" | "deduplicated";
  /**
   * The add went through Queue's `handoff`, which started the worker it needs (none at maxWorkers):
   * `handed` leased the job to that invocation (it is active), `waiting` added it to wait.
   */
  handoff?: "handed" | "waiting";
}

/** What every add of one write shares: the time, the replay-guard TTL, the events cap and level. */
export interface WriteSettings {
  now: number;
  guardTtlMs: number;
  /** The events stream cap (MAXLEN ~), BullMQ's `streams.events.maxLen`. */
  maxLenEvents: number;
  /** The queue's events level: only "all" writes add events. */
  events: EventsLevel;
}

/** @internal How adds are written, from Queue or FlowProducer options. */
