/**
 * `npm run build:lambda` (part of `npm run build`): bundles every Lambda function into
 * build/lambda/<name>/index.mjs (never dist/, which holds the package) and prints each
 * bundle's size, raw and gzipped (what a cold start reads and what the zip roughly weighs).
 */
import { relative } from "node:path";
import { type BundleReport, bundleFunctions } from "./bundle.ts";

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

function table(reports: BundleReport[]): string {
  const rows = reports.map((r) => [
    r.name,
    relative(process.cwd(), r.file),
    `${r.bytes} B`,
    kb(r.bytes),
    `${r.gzipBytes} B`,
    kb(r.gzipBytes),
    kb(r.mapBytes),
    r.externalImports.join(" ") || "-",
  ]);
  const header = [
    "function",
    "bundle",
    "bytes",
    "size",
    "gzip bytes",
    "gzip size",
    "map",
    "left to the runtime",
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) =>
        i >= 2 && i <= 6 ? cell.padStart(widths[i] as number) : cell.padEnd(widths[i] as number),
      )
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

const started = performance.now();
try {
  const reports = await bundleFunctions();
  console.log(table(reports));
  const total = reports.reduce((sum, r) => sum + r.bytes, 0);
  console.log(
    `\n${reports.length} bundles, ${kb(total)} in all, built in ${Math.round(performance.now() - started)} ms`,
  );
} catch (error) {
  // esbuild has already printed the errors with their locations.
  console.error(`build failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  process.exitCode = 1;
}
