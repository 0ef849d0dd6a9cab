/**
 * Hash tags as Redis Cluster reads them (core/redis/hash-slot.ts, and the slot function of the REST server's
 * cluster mode): the text between the first `{` and the next `}` when not empty, else the whole key.
 */
import { describe, expect, it } from "vitest";
import { checkDeadLetterSlot, checkParentSlot, hashTagOf, requiredTag } from "../../core/redis/hash-slot.ts";
import { Checker } from "../../core/validate.ts";
import { keySlot } from "../../infra/rest-server/key-slot.ts";

describe("hash tags", () => {
  it("are read as Redis Cluster reads them", () => {
    expect(hashTagOf("{email}:q:")).toBe("email");
    expect(hashTagOf("bull:{a}{b}:")).toBe("a");
    expect(hashTagOf("{}x{a}:q:")).toBeUndefined();
    expect(hashTagOf("{open:q:")).toBeUndefined();
    expect(hashTagOf("bull:q:")).toBeUndefined();
    // Redis's own examples, and keys of one tag in one slot.
    expect(keySlot("foo")).toBe(12182);
    expect(keySlot("{user1000}.following")).toBe(keySlot("{user1000}.followers"));
    // `{}` is no tag: the whole key is hashed.
    expect(keySlot("foo{}{bar}")).not.toBe(keySlot("bar"));
    expect(keySlot("{email}:q:wait")).toBe(keySlot("email"));
  });

  it("bind a dead-letter queue one way and a parent link both ways", () => {
    expect(requiredTag("{a}:q:", "{a}:dlq:")).toBeUndefined();
    expect(requiredTag("{a}:q:", "bull:dlq:")).toBe("a");
    expect(requiredTag("bull:q:", "{b}:dlq:")).toBeUndefined();
    const check = new Checker("test");
    expect(() =>
      checkDeadLetterSlot(check, "deadLetter.prefix", { prefix: "{a}", queueName: "q" }, { queue: "d" }),
    ).not.toThrow();
    expect(() =>
      checkDeadLetterSlot(
        check,
        "deadLetter.prefix",
        { prefix: "{a}", queueName: "q" },
        { queue: "d", prefix: "{b}" },
      ),
    ).toThrow(/deadLetter.prefix must be a prefix with the hash tag \{a\} of the source queue's prefix/);
    const link = (child: string, parent: string) => () =>
      checkParentSlot(check, "opts.parent.queue", "a queue", { child, parent }, parent);
    expect(link("bull:c:", "{p}:parents:")).toThrow(/hash tag \{p\}/);
    expect(link("{c}:c:", "bull:parents:")).toThrow(/hash tag \{c\}/);
    expect(link("bull:c:", "bull:parents:")).not.toThrow();
  });
});
