/**
 * Adds above one call (more than 1,000 jobs or ~8 MB) are all or nothing, as BullMQ's addBulk is:
 * staged in chunks, made visible by one commit. A failure anywhere before the commit — a job the
 * script refuses half-way, a request lost, an answer lost — leaves nothing a reader sees (the keyspace
 * digest is unchanged but for the id counter), a retry adds each job exactly once, every call is safe
 * to deliver twice, and an abandoned staging carries a TTL everywhere. Failures are real: the real
 * scripts refusing real data, or requests that a port around the real one loses.
 */
import { Queue as BullQueue } from "bullmq";
import { describe, expect, it } from "vitest";
import {
  JobIdInFlightError,
  ParentNotFoundError,
  Queue,
  type RedisPort,
  StagedAddExpiredError,
} from "../../core/index.ts";
import { createHttpApp } from "../../functions/http/index.ts";
import {
  digestWithoutCounters,
  type FaultRule,
  faultPort,
  InjectedFailure,
  keysWithTtl,
  kilobyteJobs,
} from "../support/atomic-adds.ts";
import {
  directConnectionForFile,
  keysUnder,
  sharedConnectionOptions,
  sharedRedis,
  uniquePrefix,
} from "../support/stack.ts";

const direct = directConnectionForFile();

function setup(rule: FaultRule = () => undefined) {
  const prefix = uniquePrefix("atomic");
  const port = faultPort(rule);
  return { prefix, port, queue: new Queue("q", { redis: port, prefix }) };
}

/** The digest of what readers can see: no counters, no replay guards (strings beside the queue). */
async function visible(prefix: string): Promise<string> {
  return await digestWithoutCounters(
    direct,
    prefix,
    (key, type) => key.includes(":nq-req:") && type === "string",
  );
}

async function addedIds(prefix: string): Promise<string[]> {
  const entries = await direct.xrange(`${prefix}:q:events`, "-", "+");
  return entries.filter(([, f]) => f[1] === "added").map(([, f]) => f[3] as string);
}

async function expectExactlyOnce(prefix: string, ids: string[]): Promise<void> {
  const wait = await direct.lrange(`${prefix}:q:wait`, 0, -1);
  expect(wait.length).toBe(ids.length);
  expect(new Set(wait)).toEqual(new Set(ids));
  expect((await addedIds(prefix)).sort()).toEqual([...ids].sort());
  for (const id of [ids[0], ids[ids.length - 1]] as string[]) {
    expect(await direct.pttl(`${prefix}:q:${id}`)).toBe(-1);
  }
}

/** Nothing of the add's staging is left: under nq-req only replay guards (strings with a TTL). */
async function expectNoStaging(prefix: string): Promise<void> {
  for (const key of await keysUnder(direct, `${prefix}:nq-req`)) {
    expect(await direct.type(key)).toBe("string");
    expect(await direct.pttl(key)).toBeGreaterThan(0);
  }
}

describe("addBulk of more than one call: refused half-way, nothing is visible", () => {
  it("5,000 jobs, job 2,600 names a missing parent: ParentNotFoundError, and nothing was written", async () => {
    const { prefix, port, queue } = setup();
    await queue.add("before", { n: 1 });
    const before = await visible(prefix);
    const jobs = kilobyteJobs(5000, (i) =>
      i === 2600 ? { parent: { id: "missing", queue: `${prefix}:parents` } } : undefined,
    );
    await expect(queue.addBulk(jobs)).rejects.toBeInstanceOf(ParentNotFoundError);
    // Refused by the chunk that holds job 2,600, after the earlier ones were staged.
    const staged = port.calls.filter((name) => name === "stageJobs").length;
    expect(staged).toBeGreaterThan(1);
    expect(port.calls.filter((name) => name === "commitStagedJobs")).toEqual([]);
    expect(port.calls).toContain("abortStagedJobs");
    expect(await visible(prefix)).toBe(before);
    await expectNoStaging(prefix);
    expect(await direct.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(["1"]);
  });

  it("a staging request lost half-way: the add rejects, nothing is left, a retry adds each job once", async () => {
    const { prefix, port, queue } = setup((script, n) =>
      script === "stageJobs" && n === 3 ? "fail-before" : undefined,
    );
    const before = await visible(prefix);
    const jobs = kilobyteJobs(5000, (i) => ({ jobId: `job-${i}` }));
    await expect(queue.addBulk(jobs)).rejects.toBeInstanceOf(InjectedFailure);
    expect(port.calls).toContain("abortStagedJobs");
    expect(await visible(prefix)).toBe(before);
    await expectNoStaging(prefix);
    // The custom ids are free again: the retry creates every job (none "duplicated").
    const retried = await new Queue("q", { redis: sharedRedis(), prefix }).addBulkWithOutcomes(jobs);
    expect(retried.every(({ outcome }) => outcome === "created")).toBe(true);
    await expectExactlyOnce(
      prefix,
      jobs.map((_, i) => `job-${i}`),
    );
    expect(JSON.parse((await direct.hget(`${prefix}:q:job-4321`, "data")) as string).i).toBe(4321);
  });

  it("the commit's request lost: the add rejects and nothing became visible", async () => {
    const { prefix, queue } = setup((script) => (script === "commitStagedJobs" ? "fail-before" : undefined));
    const before = await visible(prefix);
    await expect(queue.addBulk(kilobyteJobs(3000))).rejects.toBeInstanceOf(InjectedFailure);
    expect(await visible(prefix)).toBe(before);
    await expectNoStaging(prefix);
  });

  it("a staging key lost before the commit (expired): the commit refuses, nothing became visible", async () => {
    let prefix = "";
    const setupped = setup((script) =>
      script === "commitStagedJobs"
        ? async () => {
            const [stagedWait] = await keysUnder(direct, `${prefix}:nq-req`).then((keys) =>
              keys.filter((key) => key.endsWith(":stage:1:wait")),
            );
            await direct.del(stagedWait as string);
          }
        : undefined,
    );
    prefix = setupped.prefix;
    const before = await visible(prefix);
    await expect(setupped.queue.addBulk(kilobyteJobs(2500))).rejects.toBeInstanceOf(StagedAddExpiredError);
    expect(await visible(prefix)).toBe(before);
    await expectNoStaging(prefix);
  });
});

describe("addBulk of more than one call: replays and lost answers", () => {
  it("the commit ran but its answer was lost: the add resolves, every job once, events once", async () => {
    const { prefix, port, queue } = setup((script, n) =>
      script === "commitStagedJobs" && n === 1 ? "fail-after" : undefined,
    );
    const added = await queue.addBulk(kilobyteJobs(5000));
    expect(port.calls.filter((name) => name === "commitStagedJobs").length).toBe(2);
    await expectExactlyOnce(
      prefix,
      added.map((job) => job.id),
    );
    await expectNoStaging(prefix);
  });

  it("every call delivered twice (a retried request): nothing doubles, the same ids come back", async () => {
    const { prefix, queue } = setup(() => "twice");
    await queue.add("existing", { n: -1 }, { jobId: "existing" });
    const jobs = kilobyteJobs(2600, (i) => {
      if (i === 7) return { jobId: "existing" };
      if (i % 500 === 1) return { jobId: `custom-${i}` };
      if (i % 300 === 2) return { delay: 60_000 };
      if (i % 400 === 3) return { priority: 3 };
      if (i % 700 === 4) return { lifo: true };
      return i >= 100 && i < 103 ? { deduplication: { id: "d" } } : undefined;
    });
    const added = await queue.addBulkWithOutcomes(jobs);
    const outcomes = added.map(({ outcome }) => outcome);
    expect(outcomes.filter((o) => o === "duplicated")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "deduplicated")).toHaveLength(2);
    expect(added[101]?.job.id).toBe(added[100]?.job.id);
    const created = added.filter(({ outcome }) => outcome === "created").map(({ job }) => job.id);
    expect(created).toHaveLength(2597);
    const counts = await queue.getJobCounts("wait", "delayed", "prioritized");
    expect(Object.values(counts).reduce((sum, n) => sum + n, 0)).toBe(2598);
    expect(counts.delayed).toBe(jobs.filter((_, i) => i % 300 === 2).length);
    expect((await addedIds(prefix)).sort()).toEqual([...created, "existing"].sort());
    const duplicatedEvents = (await direct.xrange(`${prefix}:q:events`, "-", "+")).filter(
      ([, f]) => f[1] === "duplicated",
    );
    expect(duplicatedEvents.map(([, f]) => f[3])).toEqual(["existing"]);
    expect(await direct.hget(`${prefix}:q:existing`, "data")).toBe('{"n":-1}');
    expect(await direct.get(`${prefix}:q:de:d`)).toBe(added[100]?.job.id);
    await expectNoStaging(prefix);
  });

  it("custom ids as BullMQ: an existing id is not re-added, a repeated one counts once", async () => {
    const { prefix, queue } = setup();
    await queue.add("first", { n: "first" }, { jobId: "job-10" });
    const jobs = [
      ...kilobyteJobs(2000, (i) => ({ jobId: `job-${i}` })),
      { name: "again", data: {}, opts: { jobId: "job-5" } },
    ];
    const added = await queue.addBulkWithOutcomes(jobs);
    expect(added[10]?.outcome).toBe("duplicated");
    expect(added[2000]).toMatchObject({ outcome: "duplicated", job: { id: "job-5" } });
    expect(added.filter(({ outcome }) => outcome === "created")).toHaveLength(1999);
    expect(await direct.hget(`${prefix}:q:job-10`, "data")).toBe('{"n":"first"}');
    expect(await direct.llen(`${prefix}:q:wait`)).toBe(2000);
  });
});

describe("a staged add before its commit, and when abandoned", () => {
  it("no reader sees its jobs, only hashes with a TTL exist, and another add of its ids is told to retry", async () => {
    let prefix = "";
    let seen: Record<string, unknown> = {};
    const port = faultPort((script) =>
      script === "commitStagedJobs"
        ? async () => {
            const other = new Queue("q", { redis: sharedRedis(), prefix });
            const bull = new BullQueue("q", { connection: sharedConnectionOptions(), prefix });
            try {
              seen = {
                counts: await other.getJobCounts(),
                bullCounts: await bull.getJobCounts(),
                listed: (await other.getJobs()).length,
                queueKeys: await keysWithTtl(direct, `${prefix}:q`),
              };
              await expect(other.add("x", {}, { jobId: "job-7" })).rejects.toBeInstanceOf(JobIdInFlightError);
              // Over HTTP the same add is told to come back: 409 with Retry-After, not a 500.
              const http = createHttpApp({ redis: sharedRedis(), prefix, tokens: [{ token: "t" }] });
              const answer = await http.request("/queues/q/jobs", {
                method: "POST",
                headers: { authorization: "Bearer t", "content-type": "application/json" },
                body: JSON.stringify({ name: "x", data: {}, opts: { jobId: "job-7" } }),
              });
              seen.http = {
                status: answer.status,
                retryAfter: answer.headers.get("retry-after"),
                code: ((await answer.json()) as { error: { code: string } }).error.code,
              };
            } finally {
              await bull.close();
            }
          }
        : undefined,
    );
    prefix = uniquePrefix("atomic");
    await new Queue("q", { redis: port as RedisPort, prefix }).addBulk(
      kilobyteJobs(1500, (i) => ({ jobId: `job-${i}` })),
    );
    expect(Object.values(seen.counts as object).every((n) => n === 0)).toBe(true);
    expect(Object.values(seen.bullCounts as object).every((n) => n === 0)).toBe(true);
    expect(seen.listed).toBe(0);
    expect(seen.http).toEqual({ status: 409, retryAfter: "1", code: "job_in_flight" });
    const jobKeys = [...(seen.queueKeys as Map<string, number>)].filter(([key]) => /:q:job-\d+$/.test(key));
    expect(jobKeys).toHaveLength(1500);
    for (const [key, ttl] of jobKeys) expect(ttl, key).toBeGreaterThan(0);
    expect(await direct.llen(`${prefix}:q:wait`)).toBe(1500);
  });

  it("abandoned while staging (a request and the abort lost): all it left expires, then its ids are free", async () => {
    const { prefix, queue } = setup((script, n) =>
      (script === "stageJobs" && n === 3) || script === "abortStagedJobs" ? "fail-before" : undefined,
    );
    const before = await visible(prefix);
    const jobs = kilobyteJobs(2500, (i) => ({ jobId: `job-${i}` }));
    await expect(queue.addBulk(jobs)).rejects.toBeInstanceOf(InjectedFailure);
    const left = await keysWithTtl(direct, prefix);
    const stagedHashes = [...left.keys()].filter((key) => /:q:job-\d+$/.test(key));
    expect(stagedHashes.length).toBeGreaterThan(500);
    expect(stagedHashes.length).toBeLessThan(2500);
    expect([...left.keys()].some((key) => key.endsWith(":stage"))).toBe(true);
    for (const [key, ttl] of left) {
      if (key.endsWith(":q:id")) continue;
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(600_000);
    }
    await expect(
      new Queue("q", { redis: sharedRedis(), prefix }).add("x", {}, { jobId: "job-1" }),
    ).rejects.toBeInstanceOf(JobIdInFlightError);
    // Time passes: every key with a TTL expires.
    for (const [key, ttl] of left) if (ttl > 0) await direct.pexpire(key, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await visible(prefix)).toBe(before);
    const retried = await new Queue("q", { redis: sharedRedis(), prefix }).addBulkWithOutcomes(jobs);
    expect(retried.every(({ outcome }) => outcome === "created")).toBe(true);
  });

  it("abandoned between sealing and commit: what was sealed stays in no state, the rest expires", async () => {
    const { prefix, port, queue } = setup((script) =>
      script === "commitStagedJobs" || script === "abortStagedJobs" ? "fail-before" : undefined,
    );
    await expect(queue.addBulk(kilobyteJobs(2200))).rejects.toBeInstanceOf(InjectedFailure);
    expect(port.calls.filter((name) => name === "sealStagedJobs")).toHaveLength(1);
    const left = await keysWithTtl(direct, prefix);
    for (const [key, ttl] of left) if (ttl > 0) await direct.pexpire(key, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const sealed = (await keysUnder(direct, `${prefix}:q`)).filter((key) => /:q:\d+$/.test(key));
    // The first 700 (2,200 minus the 1,500 the commit persists itself), in no state: no reader lists them.
    expect(sealed).toHaveLength(700);
    expect(Object.values(await queue.getJobCounts()).every((n) => n === 0)).toBe(true);
    expect(await keysUnder(direct, `${prefix}:nq-req`)).toEqual([]);
  });
});
