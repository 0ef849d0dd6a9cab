/**
 * The generated reply decoders (core/redis/generated/scripts.ts, from each script's REPLY) on replies
 * shaped as Upstash answers them: integers as numbers, Lua false as null, a replay's values as text.
 * The integration suites feed them real replies; here each form and each way a reply can misfit.
 */
import { describe, expect, it } from "vitest";
import { errorForCode, JobNotFoundError, UnexpectedReplyError } from "../../core/errors.ts";
import {
  changeDelayCodes,
  decodeAckAndLease,
  decodeAddJobs,
  decodeCleanJobs,
  decodeCommitStagedJobs,
  decodeDeduplicationKey,
  decodeGetJobSchedulers,
  decodeGetMetrics,
  decodeObliterateQueue,
  decodeRecoverStalled,
  decodeSealStagedJobs,
  decodeSetRateLimit,
  decodeSweepQueues,
  decodeUpdateJob,
  obliterateQueueCodes,
  scriptCodes,
} from "../../core/redis/generated/scripts.ts";

/** The decoder's error, which must name the script and what misfit, and never quote the reply. */
function misfit(decode: () => unknown): string {
  try {
    decode();
  } catch (error) {
    expect(error).toBeInstanceOf(UnexpectedReplyError);
    return (error as Error).message;
  }
  throw new Error("the reply was accepted");
}

const secret = "s3cret-job-data";

describe("a reply that fits", () => {
  it("is named field by field, counted lists and rest groups included (ackAndLease)", () => {
    const reply = [0, 0, 1, 0, 2, 1, -4, 1, "9", "7", ["name", "a", "data", "{}"]];
    expect(decodeAckAndLease(reply)).toEqual({
      status: 0,
      info: 0,
      readyLeft: 1,
      nextDue: 0,
      codeCount: 2,
      codes: [1, scriptCodes.pendingDependencies],
      peekCount: 1,
      peeked: ["9"],
      jobs: [{ jobId: "7", fields: ["name", "a", "data", "{}"] }],
    });
  });

  it("takes a replay's text for its ints and a counted id for text", () => {
    expect(decodeCleanJobs(["1", "3", "2", "a", "b"])).toEqual({
      finished: 1,
      kept: 3,
      deleted: 2,
      ids: ["a", "b"],
    });
    expect(decodeAddJobs([1, 12, 2, "x"])).toEqual({
      form: "fresh",
      jobs: [
        { outcome: 1, jobId: "12" },
        { outcome: 2, jobId: "x" },
      ],
    });
  });

  it("tells the forms apart: codes and fixed texts are tried first", () => {
    expect(decodeAddJobs("4,9|2:2:1:x")).toEqual({ form: "replayed", text: "4,9|2:2:1:x" });
    expect(decodeAddJobs([-7, 2])).toEqual({ form: "refused", code: scriptCodes.parentConflict, index: 2 });
    expect(decodeUpdateJob(-1)).toEqual({ form: "missing", code: scriptCodes.jobNotFound });
    expect(decodeUpdateJob(3)).toEqual({ form: "done", result: 3 });
    expect(decodeObliterateQueue([0])).toEqual({ form: "step", left: 0 });
    expect(decodeObliterateQueue(-2)).toEqual({ form: "refused", code: obliterateQueueCodes.activeJobs });
    expect(decodeRecoverStalled(["skipped"])).toEqual({ form: "skipped", marker: "skipped" });
    expect(decodeRecoverStalled(["4", "5"])).toEqual({ form: "moved", ids: ["4", "5"] });
    expect(decodeSealStagedJobs([-30])).toEqual({ form: "gone", code: scriptCodes.stagingGone });
    expect(decodeCommitStagedJobs([-5, "bull:q:1"])).toEqual({
      form: "refused",
      code: scriptCodes.parentNotFound,
      detail: "bull:q:1",
    });
    expect(decodeCommitStagedJobs([])).toEqual({ form: "committed", jobs: [] });
    expect(decodeSetRateLimit("OK")).toEqual({ form: "set", ok: "OK" });
    expect(decodeSetRateLimit(1)).toEqual({ form: "removed", count: 1 });
  });

  it("checks only the forms a caller names, for replies its arguments choose", () => {
    expect(decodeGetJobSchedulers([], ["none", "one"])).toEqual({ form: "none" });
    expect(decodeGetJobSchedulers([], ["range"])).toEqual({ form: "range", schedulers: [] });
    expect(decodeGetJobSchedulers(["1700000000000", ["every", "1000"]], ["none", "one"])).toEqual({
      form: "one",
      next: 1_700_000_000_000,
      fields: ["every", "1000"],
    });
    expect(decodeGetJobSchedulers(2, ["count"])).toEqual({ form: "count", count: 2 });
    expect(decodeDeduplicationKey(null, ["owner"])).toEqual({ form: "owner", jobId: null });
    expect(decodeDeduplicationKey(1, ["removed"])).toEqual({ form: "removed", count: 1 });
  });

  it("reads nested lists, nils included (getMetrics, sweepQueues)", () => {
    expect(decodeGetMetrics([["3", null, null], ["1", "0"], 2])).toEqual({
      counters: { count: "3", prevTS: null, prevCount: null },
      points: ["1", "0"],
      pointCount: 2,
    });
    const counts = [1, 0, 0, 0, 1, 0, 0, 0, 0, 4, 2];
    const queue = [counts, ["5"], ["1-0", ["event", "added", "jobId", "5"], null], []];
    const swept = decodeSweepQueues([queue]);
    expect(swept.form === "swept" && swept.queues[0]).toMatchObject({
      counts: { waiting: 1, batchSize: 4, concurrency: 2 },
      stalled: ["5"],
      events: [{ eventId: "1-0", fields: ["event", "added", "jobId", "5"], jobName: null }],
      missing: [],
    });
    expect(decodeSweepQueues(["locked"])).toEqual({ form: "locked", marker: "locked" });
  });
});

describe("a reply that misfits", () => {
  it("is an UnexpectedReplyError naming the script and the part, never a value", () => {
    const oddHash = [0, 0, 0, 0, 0, 0, "7", ["data", secret, "name"]];
    const message = misfit(() => decodeAckAndLease(oddHash));
    expect(message).toMatch(/^ackAndLease: unexpected reply: jobs\[0\]\.fields .*odd length/);
    expect(message).not.toContain(secret);
    expect(misfit(() => decodeAckAndLease([0, 0, 0, 0, 3, 1]))).toMatch(/codes needs codeCount × 1/);
    expect(misfit(() => decodeAckAndLease([0, 0, 0, 0, 0, 0, secret]))).toMatch(/whole groups of 2/);
    expect(misfit(() => decodeAckAndLease(secret))).not.toContain(secret);
    expect(misfit(() => decodeCleanJobs([1, "x", 0]))).toMatch(/kept is not an int \(got a string\)/);
    expect(misfit(() => decodeCleanJobs([1, 2]))).toMatch(/deleted is missing/);
    expect(misfit(() => decodeGetJobSchedulers([], ["count"]))).toMatch(/as count: the reply is not an int/);
  });

  it("says why each form refused it", () => {
    const message = misfit(() => decodeUpdateJob(["1"]));
    expect(message).toMatch(/as missing: .*not an int \(got a list\); as done: .*not an int/);
    expect(misfit(() => decodeObliterateQueue(-5))).toMatch(/is not one of the script's codes/);
    expect(misfit(() => decodeObliterateQueue([0, 1]))).toMatch(/holds 2 elements, not 1/);
    expect(misfit(() => decodeRecoverStalled(["skipped", 1, []]))).toMatch(/as moved: ids\[2\] is not text/);
    const counts = [1, 0, 0, 0, 1, 0, 0, 0, 0, 4];
    expect(misfit(() => decodeSweepQueues([[counts, [], [], []]]))).toMatch(
      /as swept: queues\[0\]\.counts holds 10 elements, not 11/,
    );
  });
});

describe("the codes", () => {
  it("are generated once per name, and errorForCode maps the shared ones (childFailed included)", () => {
    expect(changeDelayCodes).toEqual({ jobNotFound: -1, notInState: -3 });
    expect(scriptCodes.childFailed).toBe(-9);
    expect(errorForCode(scriptCodes.jobNotFound, "promote", 'job "1"')).toBeInstanceOf(JobNotFoundError);
    const childFailed = errorForCode(scriptCodes.childFailed, "moveToWaitingChildren", 'job "1"');
    expect(childFailed).toBeInstanceOf(UnexpectedReplyError);
    expect(childFailed.message).toBe('moveToWaitingChildren: a child of job "1" failed');
  });
});
