/**
 * Reading a range of jobs (Queue.getJobs) in pages: each page is one short script call, so a read of
 * 100,000 jobs never holds Upstash's lock for long. A job that moved between pages and was seen
 * already is not listed twice.
 */

import { decodeGetJobsInRange, getJobsInRange } from "../redis/generated/scripts.ts";
import { queueKeyPrefix } from "../redis/keys.ts";
import type { QueueContext } from "../redis/queue-context.ts";
import { flag, runScript } from "../redis/scripts.ts";
import { Job } from "./job.ts";
import type { jobStructures } from "./job-structures.ts";

/**
 * How much one page reads: at most this many jobs, and it stops once the hashes it answers reach this
 * many bytes (one large job still goes alone). Measured with test/bench/maintenance-scale.ts: 10 to
 * 15 µs a job (more for larger hashes), so a page stays well under 20 ms in Redis.
 */
const page = { ids: 400, bytes: 1_000_000 };

export async function readJobPages<TData>(
  context: QueueContext,
  structures: ReturnType<typeof jobStructures>,
  start: number,
  end: number,
  ascending: boolean,
): Promise<Job<TData>[]> {
  const { port, prefix, queueName } = context;
  const jobs: Job<TData>[] = [];
  const seen = new Set<string>();
  let next = 0;
  let from = start;
  while (next < structures.length) {
    const rest = structures.slice(next);
    const reply = decodeGetJobsInRange(
      await runScript(
        port,
        getJobsInRange,
        { structures: rest.map((s) => ({ key: s.key })) },
        {
          prefix: queueKeyPrefix(prefix, queueName),
          ascending: flag(ascending),
          maxIds: page.ids,
          maxBytes: page.bytes,
          structures: rest.map((s, i) => ({ kind: s.kind, start: i === 0 ? from : start, stop: end })),
        },
      ),
    );
    for (const job of Job.listFromReply<TData>(context, reply.jobs)) {
      if (seen.has(job.id)) continue;
      seen.add(job.id);
      jobs.push(job);
    }
    if (reply.next === 0) break;
    next += reply.next - 1;
    from = reply.nextStart;
  }
  return jobs;
}
