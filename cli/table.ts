/**
 * Plain-text output for people: aligned tables and the small formatters their cells use. Every cell
 * passes through `cell`, so a job name or error message carrying terminal control sequences (colour
 * codes, cursor moves, a carriage return that hides a line) is shown escaped, never obeyed.
 */

export type Align = "left" | "right";

export interface Column {
  header: string;
  align?: Align;
}

// C0 and C1 controls and DEL: a terminal acts on them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const controls = /[\u0000-\u001f\u007f-\u009f]/g;

/** Text with its control characters escaped (`\n`, `\u001b`…): one printable line. */
export function printable(text: string): string {
  return text.replace(controls, (char) =>
    char === "\n" ? "\\n" : char === "\t" ? "\\t" : `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** A value as a table cell: printable, `-` when there is none. */
export function cell(value: unknown): string {
  return value === undefined || value === null || value === "" ? "-" : printable(String(value));
}

/** At most `max` characters, with an ellipsis when cut. */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** A time in ms as `2024-05-01 12:00:03Z` (UTC, to the second); `-` for none. */
export function time(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) return "-";
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")}Z`;
}

/** A table with one header line; columns padded to their widest cell, numbers usually right-aligned. */
export function table(columns: readonly Column[], rows: readonly unknown[][]): string {
  const text = rows.map((row) => columns.map((_, i) => cell(row[i])));
  const widths = columns.map((column, i) =>
    Math.max(Array.from(column.header).length, ...text.map((row) => Array.from(row[i] ?? "").length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((value, i) => {
        const pad = " ".repeat((widths[i] ?? 0) - Array.from(value).length);
        return columns[i]?.align === "right" ? pad + value : value + pad;
      })
      .join("  ")
      .trimEnd();
  return [line(columns.map((column) => column.header)), ...text.map(line)].join("\n");
}

/** `field  value` lines, fields aligned, for one record. */
export function record(entries: readonly [string, unknown][]): string {
  const width = Math.max(...entries.map(([field]) => field.length));
  return entries.map(([field, value]) => `${field.padEnd(width)}  ${cell(value)}`.trimEnd()).join("\n");
}
