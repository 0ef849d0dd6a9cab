/**
 * What the Lambda build leaves out of a bundle's text (infra/build/packed-scripts.ts, doc-text.ts):
 * the Lua sources and the scripts' layouts become packed tables, read back exactly; the HTTP API's
 * document-only text is emptied, and nothing else.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as generated from "../../core/redis/generated/scripts.ts";
import { withoutDocText } from "../../infra/build/doc-text.ts";
import { packSources, scriptShapes, withPackedSources } from "../../infra/build/packed-scripts.ts";

const scripts = (Object.values(generated) as unknown[]).filter(
  (value): value is { name: string; sha1: string; source: string; keys: unknown; argv: unknown } =>
    typeof value === "object" && value !== null && "sha1" in value && "source" in value,
);
const generatedText = readFileSync(new URL("../../core/redis/generated/scripts.ts", import.meta.url), "utf8");

describe("packed scripts", () => {
  it("read back every source exactly (the SHA-1 EVALSHA names is the source's)", async () => {
    const { createHash } = await import("node:crypto");
    const { brotliDecompressSync } = await import("node:zlib");
    const packed = packSources(scripts.map((script) => script.name));
    const table = JSON.parse(brotliDecompressSync(Buffer.from(packed, "base64")).toString("utf8"));
    expect(Object.keys(table)).toHaveLength(scripts.length);
    for (const script of scripts) {
      expect(table[script.name], script.name).toBe(script.source);
      expect(
        createHash("sha1")
          .update(table[script.name] as string)
          .digest("hex"),
        script.name,
      ).toBe(script.sha1);
    }
  });

  it("rewrite every definition and reply shape of the generated module, and pack the layouts it held", () => {
    const text = withPackedSources(generatedText);
    // The include parts stay, unused: esbuild leaves them out of the bundle.
    expect(text).not.toContain('].join("")');
    expect(text).not.toMatch(/^const \w+Reply: ReplySpec = \{/m);
    const shapes = scriptShapes(scripts.map((script) => script.name));
    for (const script of scripts) {
      const [keys, argv, reply] = shapes[script.name] ?? [];
      expect({ keys, argv }, script.name).toEqual({ keys: script.keys, argv: script.argv });
      const written = new RegExp(
        `^const ${script.name}Reply: ReplySpec = \\{ script: "${script.name}", codes: (.*), forms: (.*) \\};$`,
        "m",
      ).exec(generatedText);
      expect(reply, script.name).toEqual({
        script: script.name,
        codes: JSON.parse(written?.[1] ?? "null"),
        forms: JSON.parse(written?.[2] ?? "null"),
      });
    }
  });

  it("refuse a generated module whose layout they do not know", () => {
    expect(() => withPackedSources(generatedText.replace(/\n {2}keyLocking: /, "\n  locking: "))).toThrow(
      /reply shape for an unknown script abortStagedJobs/,
    );
  });
});

describe("document-only text", () => {
  it("is emptied in object literals: summary, description and example, whatever their form", () => {
    const source = [
      "const route = {",
      '  operationId: "addJob",',
      '  summary: "Add one job",',
      "  description:",
      '    "Two lines " +',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text holds a template literal
      "    `of ${what}`,",
      "  responses: { 200: { description: list.map((x) => x).join('; '), schema } },",
      '  example: { name: "email" },',
      "};",
      "const { description } = spec;",
      "function f(description: string) { return { description }; }",
    ].join("\n");
    const { text, emptied } = withoutDocText(source, "route.ts");
    expect(emptied).toBe(4);
    expect(text).toBe(
      [
        "const route = {",
        '  operationId: "addJob",',
        '  summary: "",',
        '  description:\n    "",',
        '  responses: { 200: { description: "", schema } },',
        '  example: "",',
        "};",
        "const { description } = spec;",
        "function f(description: string) { return { description }; }",
      ].join("\n"),
    );
  });
});
