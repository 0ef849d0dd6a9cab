/** Groups over the HTTP API (grouped adds, the groups list, pausing one group) and a producer trigger. */
import { describe, expect, it } from "vitest";
import { sqsProducer } from "../../functions/producers/index.ts";
import { lambdaContext, sqsEvent } from "../support/aws-events.ts";
import { makeApi } from "../support/http-app.ts";
import { directConnectionForFile, sharedRedis, uniquePrefix } from "../support/stack.ts";

const direct = directConnectionForFile();

describe("groups over HTTP", () => {
  it("adds grouped jobs into their groups, lists the groups, pauses and resumes one", async () => {
    const { call, admin, prefix } = makeApi();
    const added = await call("POST", "/queues/q/jobs", {
      json: [
        { name: "a", opts: { group: { id: "t1" } } },
        { name: "b", opts: { group: { id: "t2" }, delay: 60_000 } },
        { name: "c", opts: { group: { id: "t1" }, priority: 2 } },
      ],
    });
    expect(added.status).toBe(202);
    expect((added.body as { jobs: { state: string }[] }).jobs.map((job) => job.state)).toEqual([
      "waiting",
      "delayed",
      "waiting",
    ]);
    expect(await direct.zrange(`${prefix}:q:nq:g:t1`, 0, -1)).toEqual(["1", "3"]);
    expect(await direct.llen(`${prefix}:q:wait`)).toBe(0);
    const listed = await call("GET", "/queues/q/groups");
    expect(listed.body).toEqual({
      start: 0,
      groups: [{ id: "t1", status: "waiting", waiting: 2, active: 0 }],
    });
    expect((await call("POST", "/queues/q/groups/t1/pause")).status).toBe(403);
    expect((await admin("POST", "/queues/q/groups/t1/pause")).body).toEqual({
      id: "t1",
      paused: true,
      changed: true,
    });
    expect((await call("GET", "/queues/q/groups")).body).toMatchObject({
      groups: [{ id: "t1", status: "paused" }],
    });
    expect((await admin("POST", "/queues/q/groups/t1/resume")).body).toEqual({
      id: "t1",
      paused: false,
      changed: true,
    });
    const bad = await call("POST", "/queues/q/jobs", { json: { name: "x", opts: { group: { id: "a:b" } } } });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: { field: string } }).error.field).toBe("opts.group.id");
    const unknown = await call("POST", "/queues/q/jobs", {
      json: { name: "x", opts: { group: { name: "t" } } },
    });
    expect(unknown.status).toBe(400);
  });
});

describe("groups through a producer trigger", () => {
  it("an SQS message's job with opts.group joins its group (the message's tenant)", async () => {
    const prefix = uniquePrefix("gsqs");
    const handler = sqsProducer({
      queue: "imports",
      redis: sharedRedis(),
      prefix,
      map: (record) => {
        const { tenant } = JSON.parse(record.body) as { tenant: string };
        return { name: "import", data: { tenant }, opts: { group: { id: tenant } } };
      },
    });
    const event = sqsEvent([
      { body: '{"tenant":"acme"}' },
      { body: '{"tenant":"bolt"}' },
      { body: '{"tenant":"acme"}' },
    ]);
    expect(await handler(event, lambdaContext())).toEqual({ batchItemFailures: [] });
    expect(await direct.zcard(`${prefix}:imports:nq:g:acme`)).toBe(2);
    expect(await direct.zcard(`${prefix}:imports:nq:g:bolt`)).toBe(1);
    expect(await direct.llen(`${prefix}:imports:wait`)).toBe(0);
  });
});
