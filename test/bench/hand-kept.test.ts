/** A regenerated BENCHMARKS.md keeps the sections reported by hand (test/bench/hand-kept.ts). */
import { describe, expect, it } from "vitest";
import { withHandKeptSections } from "./hand-kept.ts";

const generated = "# Benchmarks\n\n## 1. Cost\n\nnew numbers\n";

describe("withHandKeptSections", () => {
  it("appends the maintenance section of the file it replaces, up to the next section", () => {
    const previous =
      "# Benchmarks\n\n## 1. Cost\n\nold numbers\n\n## Maintenance at 1,000,000 jobs\n\n| a |\n\nnotes\n\n## Later\n\nx\n";
    expect(withHandKeptSections(generated, previous)).toBe(
      "# Benchmarks\n\n## 1. Cost\n\nnew numbers\n\n## Maintenance at 1,000,000 jobs\n\n| a |\n\nnotes\n",
    );
  });

  it("keeps a last section to the end, and writes the generated text alone without one", () => {
    const previous = "# B\n\n## Maintenance at 1,000,000 jobs\n\ntable\n";
    expect(withHandKeptSections(generated, previous)).toBe(
      `${generated}\n## Maintenance at 1,000,000 jobs\n\ntable\n`,
    );
    expect(withHandKeptSections(generated, "# B\n\n## 1. Cost\n")).toBe(generated);
    expect(withHandKeptSections(generated, undefined)).toBe(generated);
  });
});
