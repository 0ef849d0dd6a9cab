/**
 * The cron parser where nothing registered it (core/schedulers/cron.ts): the Queue side of a module graph that
 * never imported `nimbusq/cron` or the worker's schedule timing, as a deep import in plain Node is.
 * It loads cron-parser on first need, once, and times patterns with it.
 */
import { describe, expect, it } from "vitest";
import {
  CronParserMissingError,
  cronNext,
  loadCronParser,
  loadedCronParser,
} from "../../core/schedulers/cron.ts";

describe("the cron parser, unregistered", () => {
  it("is missing until loaded, then loaded once from cron-parser and used by cronNext", async () => {
    expect(() => loadedCronParser()).toThrow(CronParserMissingError);
    expect(() => cronNext("0 3 * * *", {}, 0)).toThrow(/import "nimbusq\/cron"/);
    const [first, second] = await Promise.all([loadCronParser(), loadCronParser()]);
    expect(second).toBe(first);
    expect(loadedCronParser()).toBe(first);
    // 03:00 in Berlin on the night clocks go forward: CEST, 01:00 UTC.
    const next = cronNext("0 3 * * *", { tz: "Europe/Berlin" }, Date.parse("2027-03-27T12:00:00Z"));
    expect(new Date(next as number).toISOString()).toBe("2027-03-28T01:00:00.000Z");
  });
});
