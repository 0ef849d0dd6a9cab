/** BullMQ 6.7.0's QueueEvents listener signatures, as nimbusq's QueueEvents emits them. */

/** BullMQ 6.7.0's QueueEvents listener signatures (`id` is the stream entry's id). */
export interface QueueEventsListener<TResult = unknown> {
  active: (args: { jobId: string; prev?: string }, id: string) => void;
  added: (args: { jobId: string; name: string }, id: string) => void;
  cleaned: (args: { count: string }, id: string) => void;
  completed: (args: { jobId: string; returnvalue: TResult; prev?: string }, id: string) => void;
  deduplicated: (
    args: { jobId: string; deduplicationId: string; deduplicatedJobId: string },
    id: string,
  ) => void;
  /** `delay` is the absolute time the job is due (ms since the epoch), as BullMQ writes it. */
  delayed: (args: { jobId: string; delay: number }, id: string) => void;
  drained: (id: string) => void;
  duplicated: (args: { jobId: string }, id: string) => void;
  /** A failed read (the next one is retried after `poll.maxMs`) or a listener that threw. */
  error: (error: Error) => void;
  failed: (args: { jobId: string; failedReason: string; prev?: string }, id: string) => void;
  paused: (args: object, id: string) => void;
  progress: (args: { jobId: string; data: unknown }, id: string) => void;
  removed: (args: { jobId: string; prev: string }, id: string) => void;
  resumed: (args: object, id: string) => void;
  "retries-exhausted": (args: { jobId: string; attemptsMade: string }, id: string) => void;
  stalled: (args: { jobId: string }, id: string) => void;
  waiting: (args: { jobId: string; prev?: string }, id: string) => void;
  "waiting-children": (args: { jobId: string; prev?: string }, id: string) => void;
}

type JoblessEvent = "cleaned" | "drained" | "error" | "paused" | "resumed";

/** BullMQ's per-job events, e.g. `completed:42`: the same arguments, only for that job. */
export type QueueEventsJobListener<TResult = unknown> = {
  [K in keyof QueueEventsListener<TResult> as K extends JoblessEvent
    ? never
    : `${K}:${string}`]: QueueEventsListener<TResult>[K];
};

// biome-ignore lint/suspicious/noExplicitAny: custom listeners declare their own arguments
export type AnyListener = (...args: any[]) => unknown;
