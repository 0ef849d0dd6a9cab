/** The REPLY and CODES parts of the Lua contract header (lua/README.md, "Replies"), as the build reads them. */
import { describe, expect, it } from "vitest";
import { HeaderError, parseHeader } from "../../infra/lua-build/header.ts";
import { parseType, splitType } from "../../infra/lua-build/reply-type.ts";

const header = (reply: string) => `--[[
demo: Does a thing.

KEYS
  first  the first key
${reply}
EVENTS
  none
]]
return 1`;

const demo = header(`REPLY done  the usual answer
  count  int  how many
  ids  string[count]  that many ids
  jobs  (jobId string, fields hash)...  the rest, in pairs,
    described over two lines
REPLY refused
  code  code
CODES
  jobNotFound  -1  no such job
  jobLocked  -20  the job is locked`);

describe("REPLY and CODES", () => {
  it("read into forms, fields, types and codes", () => {
    const parsed = parseHeader("demo.lua", demo);
    expect(parsed.codes).toEqual([
      { name: "jobNotFound", value: -1, doc: "no such job" },
      { name: "jobLocked", value: -20, doc: "the job is locked" },
    ]);
    expect(parsed.reply.map((form) => form.name)).toEqual(["done", "refused"]);
    const done = parsed.reply[0];
    expect(done?.doc).toBe("the usual answer");
    expect(done?.fields).toEqual([
      { name: "count", type: "int" },
      { name: "ids", type: { each: "string", count: "count" } },
      {
        name: "jobs",
        type: {
          each: {
            group: [
              { name: "jobId", type: "string" },
              { name: "fields", type: "hash" },
            ],
          },
        },
      },
    ]);
    expect(done?.docs.jobs).toBe("the rest, in pairs, described over two lines");
  });

  it("lets a type run over lines inside its brackets", () => {
    const parsed = parseHeader(
      "demo.lua",
      header(`REPLY
  queues  {(waiting int,
    paused int)}...  one per queue`),
    );
    expect(parsed.reply[0]?.fields[0]?.type).toEqual({
      each: {
        list: {
          group: [
            { name: "waiting", type: "int" },
            { name: "paused", type: "int" },
          ],
        },
      },
    });
    expect(parsed.reply[0]?.docs.queues).toBe("one per queue");
  });

  it("reads nested lists, literals and nil-able text", () => {
    expect(parseType('{"skipped"}')).toEqual({ list: { literal: "skipped" } });
    expect(parseType("{string...}")).toEqual({ list: { each: "string" } });
    expect(parseType("{(a string?, b {int})}...")).toEqual({
      each: {
        list: {
          group: [
            { name: "a", type: "string?" },
            { name: "b", type: { list: "int" } },
          ],
        },
      },
    });
    expect(splitType("{(a int, b int)}...  prose (with brackets)")).toEqual({
      type: "{(a int, b int)}...",
      doc: "prose (with brackets)",
    });
  });

  it("refuses what it cannot decode honestly", () => {
    const refused = (reply: string, problem: RegExp) =>
      expect(() => parseHeader("demo.lua", header(reply))).toThrow(problem);
    refused("REPLY\n  n  integer", /expected int, string/);
    refused("REPLY\n  ids  string...\n  n  int", /only the last field may take the rest/);
    refused("REPLY\n  n  string\n  ids  string[n]", /\[n\] must name an earlier int field/);
    refused("REPLY\n  n  code", /a code needs a CODES section/);
    refused("REPLY\n  n  int\nREPLY other\n  m  int", /names each one/);
    refused("REPLY\n  pair  (a int, b int)", /a group stands in a list/);
    refused("REPLY\n  n  int\nCODES\n  done  1", /negative number/);
    refused("REPLY\n  n  int\nCODES\n  a  -1\n  b  -1", /repeats a name or a number/);
    expect(() => parseHeader("demo.lua", header("REPLY\n  n  {int"))).toThrow(HeaderError);
  });
});
