/**
 * The shipped sources lose their comments (infra/lua-build/strip.ts): only comments, never code that
 * looks like one — and every script still runs (the whole suite runs them).
 */
import { describe, expect, it } from "vitest";
import { buildAllScripts } from "../../infra/lua-build/generate.ts";
import { stripLuaComments } from "../../infra/lua-build/strip.ts";

describe("stripLuaComments", () => {
  it("drops line and long comments and the lines they leave empty, keeps indentation", () => {
    const lua =
      "-- head\nlocal a = 1 -- trailing\n\n  --[[ long\n comment ]]\n  if a then\n    return a --[==[ x ]==]\n  end\n";
    expect(stripLuaComments(lua)).toBe("local a = 1\n  if a then\n    return a\n  end\n");
  });

  it("keeps -- and brackets inside strings and long strings", () => {
    const lua = `local s = "a--b" -- c\nlocal t = 'x\\'--y'\nlocal u = [[--not a comment]]\nlocal v = [==[ ]] -- ]==]\n`;
    expect(stripLuaComments(lua)).toBe(
      `local s = "a--b"\nlocal t = 'x\\'--y'\nlocal u = [[--not a comment]]\nlocal v = [==[ ]] -- ]==]\n`,
    );
  });

  it("keeps the shebang line and whole-line comments the caller asks to keep", () => {
    const lua =
      "#!lua flags=allow-key-locking\n-- include foo\n  -- include bar\nlocal x = 1 -- include baz\n";
    expect(stripLuaComments(lua, /^-- include \w+$/)).toBe(
      "#!lua flags=allow-key-locking\n-- include foo\n  -- include bar\nlocal x = 1\n",
    );
  });

  it("refuses an unclosed string rather than guess", () => {
    expect(() => stripLuaComments('local s = "open\n')).toThrow(/unclosed string/);
  });

  it("leaves no comment in a built script but the name line and the include marks", () => {
    for (const script of buildAllScripts("lua")) {
      const comments = script.source.split("\n").filter((line) => /^\s*--/.test(line));
      for (const line of comments) expect(line).toMatch(/^-- (nimbusq:\w+ \(generated|include \w+$)/);
    }
  });
});
