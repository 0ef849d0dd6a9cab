/**
 * `Job.remove({ removeChildren })` against bullmq@6.7.0: a flow tree across three queues removed by
 * each, locked descendants, a scheduler's current iteration, ids with colons, and bad input.
 */
import { describe, expect, it } from "vitest";
import {
  type ActiveJob,
  FlowProducer,
  JobBelongsToSchedulerError,
  JobLockedError,
  ValidationError,
  Worker,
} from "../../core/index.ts";
import { keysUnder, sharedRedis } from "../support/stack.ts";
import {
  direct,
  eventsSince,
  keysOf,
  lastEventId,
  picture,
  type Side,
  sides,
  type Twins,
  twins,
  useTwins,
} from "../support/twin-queues.ts";

useTwins();

/**
 * root (<side>-parents) ← top (<side>) ← kid-a (<side>-kids, completed), kid-b (<side>-kids, failed,
 * still pending), kid-c (<side>, waiting, released by) ← grand (<side>-kids, completed).
 */
async function tree(t: Twins, side: Side): Promise<void> {
  const flows = new FlowProducer({ redis: sharedRedis(), prefix: t.prefix });
  await flows.add({
    name: "root",
    queueName: `${side}-parents`,
    opts: { jobId: "root" },
    children: [
      {
        name: "top",
        queueName: side,
        opts: { jobId: "top" },
        children: [
          { name: "kid-a", queueName: `${side}-kids`, opts: { jobId: "kid-a" } },
          { name: "kid-b", queueName: `${side}-kids`, opts: { jobId: "kid-b" } },
          {
            name: "kid-c",
            queueName: side,
            opts: { jobId: "kid-c" },
            children: [{ name: "grand", queueName: `${side}-kids`, opts: { jobId: "grand" } }],
          },
        ],
      },
    ],
  });
  await new Worker(
    `${side}-kids`,
    async (job: ActiveJob) => {
      if (job.name === "kid-b") throw new Error("b failed");
      return job.name;
    },
    { redis: sharedRedis(), prefix: t.prefix },
  ).drain();
}

const queuesOf = (side: Side) => [side, `${side}-kids`, `${side}-parents`];

/** Events after `since` per queue, sorted (a set's members come out in per-key hash order). */
async function eventsAfter(t: Twins, side: Side, since: Record<string, string>) {
  const out: Record<string, string[]> = {};
  for (const [i, name] of queuesOf(side).entries()) {
    const events = await eventsSince(t.prefix, name, since[name]);
    out[String(i)] = events.map((fields) => fields.join(" ")).sort();
  }
  return out;
}

describe("Job.remove does what BullMQ's job.remove does", () => {
  it("removes a job with its children depth-first across queues, releasing its parent", async () => {
    const t = twins();
    const since: Record<string, string> = {};
    for (const side of sides) {
      await tree(t, side);
      for (const name of queuesOf(side)) since[name] = await lastEventId(t.prefix, name);
    }
    await (await t.bull("b").getJob("top"))?.remove();
    await (await t.queue("n").getJob("top"))?.remove();

    for (const [i, suffix] of ["", "-kids", "-parents"].entries()) {
      expect({ i, picture: await picture(t.prefix, `n${suffix}`, "n") }).toEqual({
        i,
        picture: await picture(t.prefix, `b${suffix}`, "b"),
      });
    }
    expect(await eventsAfter(t, "n", since)).toEqual(await eventsAfter(t, "b", since));
    expect((await keysOf(t.prefix, "n-kids")).filter((key) => !key.startsWith("nq-req:"))).toEqual([
      "events",
      "id",
      "marker",
    ]);
    expect(await direct.lrange(t.key("n-parents", "wait"), 0, -1)).toEqual(["root"]);
    expect(await direct.exists(t.key("n", "top"), t.key("n", "kid-c"))).toBe(0);
    const ours = (await eventsAfter(t, "n", since))["0"];
    expect(ours).toContain("event removed jobId top prev wait");
    expect(ours).toContain("event removed jobId kid-c prev wait");
  });

  it("removes only the job with removeChildren false, as BullMQ", async () => {
    const t = twins();
    for (const side of sides) await tree(t, side);
    await (await t.bull("b").getJob("top"))?.remove({ removeChildren: false });
    await (await t.queue("n").getJob("top"))?.remove({ removeChildren: false });
    for (const suffix of ["", "-kids", "-parents"])
      expect(await picture(t.prefix, `n${suffix}`, "n")).toEqual(await picture(t.prefix, `b${suffix}`, "b"));
    expect(await direct.exists(t.key("n", "kid-c"), t.key("n-kids", "grand"))).toBe(2);
  });

  it("is refused while a pending descendant is locked, or the job is a scheduler's current iteration", async () => {
    const t = twins();
    for (const side of sides) await tree(t, side);
    for (const side of sides) {
      await direct.set(t.key(side, "kid-c:lock"), "token", "PX", 60_000);
      // kid-c is pending for top, so its lock blocks the whole tree; grand is not pending anymore.
    }
    await expect((await t.bull("b").getJob("top"))?.remove()).rejects.toThrow(/locked/);
    const before = await keysUnder(direct, t.prefix);
    const top = await t.queue("n").getJob("top");
    await expect(top?.remove()).rejects.toBeInstanceOf(JobLockedError);
    expect(await keysUnder(direct, t.prefix)).toEqual(before);

    const now = Date.now();
    for (const side of sides)
      await t.queue(side, () => now).upsertJobScheduler("tick", { every: 60_000 }, { data: {} });
    const id = `repeat:tick:${now}`;
    await expect((await t.bull("b").getJob(id))?.remove()).rejects.toThrow(/scheduler/i);
    const iteration = await t.queue("n").getJob(id);
    await expect(iteration?.remove()).rejects.toBeInstanceOf(JobBelongsToSchedulerError);
    expect(await direct.exists(t.key("n", id))).toBe(1);
    await t.queue("n").removeJobScheduler("tick");
    await iteration?.remove();
    expect(await direct.exists(t.key("n", id))).toBe(0);
  });

  it("finds children whose ids hold colons (BullMQ would cut them at the last one)", async () => {
    const t = twins();
    const flows = new FlowProducer({ redis: sharedRedis(), prefix: t.prefix });
    await flows.add({
      name: "parent",
      queueName: "n",
      opts: { jobId: "p" },
      children: [
        { name: "a", queueName: "n-kids", opts: { jobId: "order:1:ship" } },
        { name: "b", queueName: "n-kids", opts: { jobId: "plain" } },
      ],
    });
    await (await t.queue("n").getJob("p"))?.remove();
    expect(await keysOf(t.prefix, "n-kids")).toEqual(["events", "id", "marker"]);
    const removed = await eventsSince(t.prefix, "n-kids", "0-0");
    expect(
      removed
        .filter((fields) => fields[1] === "removed")
        .map((fields) => fields[3])
        .sort(),
    ).toEqual(["order:1:ship", "plain"]);
  });

  it("refuses a non-boolean removeChildren, writing nothing", async () => {
    const t = twins();
    const job = await t.queue("n").add("x", {});
    const before = await keysUnder(direct, t.prefix);
    const call = job.remove({ removeChildren: "yes" as unknown as boolean });
    await expect(call).rejects.toBeInstanceOf(ValidationError);
    await expect(call).rejects.toMatchObject({ field: "removeChildren" });
    expect(await keysUnder(direct, t.prefix)).toEqual(before);
  });
});
