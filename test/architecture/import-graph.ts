/** The import graph of a folder of TypeScript modules, for the architecture tests. */
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { filesEndingWith } from "../support/source-files.ts";

export const tsFiles = (dir: string): string[] =>
  filesEndingWith(dir, ".ts").filter((file) => !file.endsWith(".d.ts"));

/** Every module specifier a file names (static, type-only and dynamic imports, re-exports). */
export function specifiers(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1] as string);
}

/** file → the files under the same tree it imports (relative specifiers only), as repo-relative paths. */
export function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(dir)) {
    const targets = specifiers(file)
      .filter((s) => s.startsWith("."))
      .map((s) => relative(".", resolve(dirname(file), s)));
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components with more than one module (Tarjan): each is an import cycle. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    indexOf.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!indexOf.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, indexOf.get(next) as number));
      }
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: string[] = [];
      for (;;) {
        const member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
        if (member === node) break;
      }
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indexOf.has(node)) visit(node);
  return found;
}
