import { describe, expect, it } from "vitest";
import { Checker, checkJobId } from "../../core/validate.ts";
import { derivedJobId, indexedJobId } from "../../functions/producers/job-ids.ts";

const valid = (id: string) => checkJobId(new Checker("test"), "jobId", id);

describe("derived job ids", () => {
  it("prefix the source, so counter-like identities stay custom ids", () => {
    for (const identity of ["0", "42", "0:1:2", "-7"]) {
      const id = derivedJobId("sqs", identity);
      expect(valid(id)).toBe(id);
    }
    expect(derivedJobId("sqs", "42")).toBe("sqs-42");
  });

  it("encode ':', '#' and '%' so any identity passes BullMQ's id rules and none collide", () => {
    const identities = ["a:b", "a%3Ab", "a#1", "a%231", "arn:aws:dynamodb:us-east-1:1:table/T@1"];
    const ids = identities.map((identity) => derivedJobId("x", identity));
    expect(ids).toEqual(["x-a%3Ab", "x-a%253Ab", "x-a%231", "x-a%25231", expect.not.stringContaining(":")]);
    expect(new Set(ids).size).toBe(identities.length);
    for (const id of ids) expect(valid(indexedJobId(id, 3))).toBe(`${id}#3`);
  });

  it("hash identities too long to read, into ids no readable one can equal", () => {
    const long = derivedJobId("s3", `bucket/${"k".repeat(1200)}@01`);
    expect(long).toMatch(/^s3#[0-9a-f]{64}$/);
    expect(derivedJobId("s3", `bucket/${"k".repeat(1200)}@02`)).not.toBe(long);
    expect(valid(indexedJobId(long, 999))).toBe(`${long}#999`);
    // The longest readable id still leaves room for an index under BullMQ's 1,024 characters.
    const edge = derivedJobId("s3", "k".repeat(997));
    expect(edge).toHaveLength(1000);
    expect(valid(indexedJobId(edge, 9999))).toBe(`${edge}#9999`);
  });
});
