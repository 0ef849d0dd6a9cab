/**
 * Redis never rolls a script back, so every script checks what can fail before its first write
 * (issue 11, point 4; the audit is lua/CHECK-BEFORE-WRITE.md). Arguments a script would only turn into
 * numbers after writing are refused up front, naming the script and the argument, with the keyspace
 * unchanged (not even a replay guard); queue settings that are no numbers, which used to stop scripts
 * half-way, are read as absent. The scripts are called directly, as a buggy or foreign caller would.
 */
import { describe, expect, it } from "vitest";
import { Queue, toRedisPort, UnrecoverableError, Worker } from "../../core/index.ts";
import type { AckEntry } from "../../core/job/ack-entry.ts";
import {
  type AddJobsArgsJobsItem,
  ackPromoteAndLease,
  addJobs,
  changeDelay,
} from "../../core/redis/generated/scripts.ts";
import {
  attentionKey,
  jobKey,
  queueKeyPrefix,
  queueKeys,
  replayGuardKey,
  workerRegistryKey,
} from "../../core/redis/keys.ts";
import { runScript } from "../../core/redis/scripts.ts";
import { compactEntry } from "../../core/worker/entry-wire.ts";
import { keyspaceDigest } from "../support/keyspace.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const redis = sharedRedis();
const port = toRedisPort(redis);
const direct = directConnectionForFile();

function workerCall(prefix: string, token: string, count: number, jobs: ReturnType<typeof compactEntry>[]) {
  return runScript(
    port,
    ackPromoteAndLease,
    {
      ...queueKeys(prefix, "q"),
      replayGuard: replayGuardKey(prefix, "q", `${token}-${count}`),
      attention: attentionKey(prefix),
      workers: workerRegistryKey(prefix, "q"),
    },
    {
      prefix: queueKeyPrefix(prefix, "q"),
      leaseToken: token,
      now: Date.now(),
      leaseMs: 30_000,
      count,
      peek: 0,
      candidates: "",
      limiterMax: 0,
      limiterDuration: 0,
      groupConcurrency: 0,
      groupLimitMax: 0,
      groupLimitDuration: 0,
      workerName: "",
      guardTtl: 60_000,
      maxLenEvents: 10_000,
      events: 2,
      prunes: "",
      unregister: "",
      jobs,
    },
  );
}

const completion: AckEntry = {
  id: "1",
  token: "t1",
  outcome: "completed",
  value: "42",
  stacktrace: "",
  attemptsMade: 1,
  due: 0,
  priority: 0,
  lifo: "",
  keepCount: -1,
  keepAge: 0,
  keepLimit: 0,
  attempts: 1,
  parentKey: "",
  parentPrefix: "",
  parentPolicy: "",
  dedupId: "",
  deferred: "",
  deadLetter: "",
  deadLetterId: "",
  deadLetterName: "",
  deadLetterData: "",
  deadLetterOpts: "",
};

describe("scripts check before their first write", () => {
  it("a worker call with a malformed entry is refused whole, the leased job untouched", async () => {
    const prefix = uniquePrefix();
    await new Queue("q", { redis, prefix }).add("j", {});
    await workerCall(prefix, "t1", 1, []);
    const before = await keyspaceDigest(direct, prefix);
    // A completion ahead of the bad entry would already be written by a script that checked late.
    const bad = { ...completion, id: "2", keepCount: "many" as unknown as number };
    await expect(workerCall(prefix, "t2", 0, [compactEntry(completion), compactEntry(bad)])).rejects.toThrow(
      /worker call: acked entry 2 has a bad keepCount/,
    );
    await expect(
      workerCall(prefix, "t3", 0, [compactEntry({ ...completion, outcome: "done" as "completed" })]),
    ).rejects.toThrow(/acked entry 1 has a bad outcome/);
    expect(await keyspaceDigest(direct, prefix)).toBe(before);
    // The same call, well-formed, completes the job.
    const reply = (await workerCall(prefix, "t4", 0, [compactEntry(completion)])) as unknown[];
    expect(reply[5]).toBe(1);
    expect(await direct.zscore(`${prefix}:q:completed`, "1")).not.toBeNull();
  });

  it("a worker call with a lease count out of range or a bad number is refused before writing", async () => {
    const prefix = uniquePrefix();
    await new Queue("q", { redis, prefix }).add("j", {});
    const before = await keyspaceDigest(direct, prefix);
    await expect(workerCall(prefix, "t1", 5000, [])).rejects.toThrow(/count and peek must be at most 4000/);
    const keys = {
      ...queueKeys(prefix, "q"),
      replayGuard: replayGuardKey(prefix, "q", "x"),
      attention: attentionKey(prefix),
      workers: workerRegistryKey(prefix, "q"),
    };
    const args = {
      prefix: queueKeyPrefix(prefix, "q"),
      leaseToken: "t",
      now: Date.now(),
      leaseMs: "30s",
      count: 1,
      peek: 0,
      candidates: "",
      limiterMax: 0,
      limiterDuration: 0,
      groupConcurrency: 0,
      groupLimitMax: 0,
      groupLimitDuration: 0,
      workerName: "",
      guardTtl: 60_000,
      maxLenEvents: 10_000,
      events: 2,
      prunes: "",
      unregister: "",
      jobs: [],
    };
    // The types refuse text for an integer argument; the script must too, for callers without them.
    await expect(runScript(port, ackPromoteAndLease, keys, args as never)).rejects.toThrow(
      /argument leaseMs must be an integer/,
    );
    expect(await keyspaceDigest(direct, prefix)).toBe(before);
  });

  it("changeDelay with a bad delay leaves the job in delayed (it used to leave it in no structure)", async () => {
    const prefix = uniquePrefix();
    const job = await new Queue("q", { redis, prefix }).add("j", {}, { delay: 60_000 });
    const before = await keyspaceDigest(direct, prefix);
    const keys = queueKeys(prefix, "q");
    await expect(
      runScript(
        port,
        changeDelay,
        {
          replayGuard: replayGuardKey(prefix, "q", "cd"),
          attention: attentionKey(prefix),
          jobKey: jobKey(prefix, "q", job.id as string),
          delayed: keys.delayed,
          meta: keys.meta,
          marker: keys.marker,
          events: keys.events,
        },
        { jobId: job.id as string, delay: "soon" as unknown as number, now: Date.now(), guardTtl: 60_000 },
      ),
    ).rejects.toThrow(/changeDelay: argument delay must be an integer/);
    expect(await keyspaceDigest(direct, prefix)).toBe(before);
    expect(await job.getState()).toBe("delayed");
  });

  it("addJobs with a bad number writes nothing, not even an id", async () => {
    const prefix = uniquePrefix();
    const keys = queueKeys(prefix, "q");
    const before = await keyspaceDigest(direct, prefix);
    const job: AddJobsArgsJobsItem = {
      queue: 1,
      customId: "",
      generatedId: "",
      name: "j",
      data: "{}",
      opts: "{}",
      timestamp: Date.now(),
      delay: 0,
      priority: 0,
      placement: "wait",
      parentKey: "",
      parentField: "",
      parentPrefix: "",
      dedupId: "",
      dedupTtl: 0,
      dedupExtend: "",
      dedupReplace: "",
      repeatJobKey: "",
      group: "",
    };
    const call = (jobs: (typeof job)[]) =>
      runScript(
        port,
        addJobs,
        {
          replayGuard: replayGuardKey(prefix, "q", "add"),
          attention: attentionKey(prefix),
          queues: [{ ...keys, waitingChildren: keys.waitingChildren }],
        },
        { guardTtl: 60_000, maxLenEvents: 10_000, now: Date.now(), events: 2, jobs },
      );
    await expect(call([job, { ...job, priority: "nan" as unknown as number }])).rejects.toThrow(
      /addJobs: job 2 has a bad priority/,
    );
    await expect(call([{ ...job, queue: 2 }])).rejects.toThrow(/addJobs: job 1 names no queue of the call/);
    expect(await keyspaceDigest(direct, prefix)).toBe(before);
  });

  it("settings that are no numbers count as absent: a retry still goes all the way", async () => {
    const prefix = uniquePrefix();
    const queue = new Queue("q", { redis, prefix });
    const job = await queue.add("j", {});
    await new Worker(
      "q",
      async () => {
        throw new UnrecoverableError("no");
      },
      { redis, prefix },
    ).drain();
    expect(await job.getState()).toBe("failed");
    // BullMQ would stop its own scripts on these; nimbusq's read them as unset.
    await direct.hset(`${prefix}:q:meta`, "opts.maxLenEvents", "lots", "concurrency", "some");
    await job.retry("failed");
    expect(await job.getState()).toBe("waiting");
    const events = await direct.xrange(`${prefix}:q:events`, "-", "+");
    expect(events.at(-1)?.[1]).toEqual(["event", "waiting", "jobId", job.id, "prev", "failed"]);
  });
});
