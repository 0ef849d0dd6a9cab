/**
 * The benchmark chart as a self-contained SVG: panels of horizontal bars, nimbusq next to BullMQ,
 * each panel on its own linear scale with the value printed at the end of each bar.
 */

export type Series = "nimbusq" | "bullmq" | "other";

export interface Bar {
  series: Series;
  value: number;
  /** Printed after the bar (default: the value). */
  text?: string;
}

export interface Group {
  label: string;
  bars: Bar[];
}

export interface Panel {
  title: string;
  /** A note under the title, e.g. "fewer is better". */
  note: string;
  groups: Group[];
}

const colors: Record<Series, string> = { nimbusq: "#0f8b8d", bullmq: "#d1495b", other: "#8d99ae" };
const width = 1040;
const columns = 2;
const panelWidth = (width - 60) / columns;
const labelWidth = 150;
const barHeight = 13;
const barGap = 3;
const groupGap = 9;

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function formatValue(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString("en-US");
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function panelHeight(panel: Panel): number {
  const bars = panel.groups.reduce((sum, g) => sum + g.bars.length, 0);
  return 52 + bars * (barHeight + barGap) + panel.groups.length * groupGap;
}

function renderPanel(panel: Panel, x: number, y: number): string {
  const out: string[] = [];
  const height = panelHeight(panel);
  out.push(
    `<rect x="${x}" y="${y}" width="${panelWidth}" height="${height}" rx="6" fill="#ffffff" stroke="#d9dee5"/>`,
  );
  out.push(
    `<text x="${x + 12}" y="${y + 20}" font-size="14" font-weight="600" fill="#1f2933">${escapeXml(panel.title)}</text>`,
  );
  out.push(`<text x="${x + 12}" y="${y + 36}" font-size="11" fill="#616e7c">${escapeXml(panel.note)}</text>`);
  const values = panel.groups.flatMap((g) => g.bars.map((b) => b.value)).filter((v) => Number.isFinite(v));
  const max = Math.max(...values, 0) || 1;
  // Room after the longest bar for its value.
  const barSpace = panelWidth - labelWidth - 130;
  let cursor = y + 48;
  for (const group of panel.groups) {
    const groupHeight = group.bars.length * (barHeight + barGap) - barGap;
    out.push(
      `<text x="${x + labelWidth - 6}" y="${cursor + groupHeight / 2 + 4}" font-size="11" text-anchor="end" fill="#1f2933">${escapeXml(group.label)}</text>`,
    );
    for (const bar of group.bars) {
      const length = Number.isFinite(bar.value) ? Math.max(1, (bar.value / max) * barSpace) : 0;
      out.push(
        `<rect x="${x + labelWidth}" y="${cursor}" width="${length.toFixed(1)}" height="${barHeight}" rx="2" fill="${colors[bar.series]}"/>`,
      );
      out.push(
        `<text x="${(x + labelWidth + length + 5).toFixed(1)}" y="${cursor + barHeight - 3}" font-size="10.5" fill="#323f4b">${escapeXml(bar.text ?? formatValue(bar.value))}</text>`,
      );
      cursor += barHeight + barGap;
    }
    cursor += groupGap;
  }
  return out.join("\n");
}

/** The whole chart: a title, a legend, and the panels in two columns. */
export function renderChart(title: string, subtitle: string, panels: Panel[]): string {
  const heights: [number, number] = [0, 0];
  const placed: string[] = [];
  const top = 78;
  for (const panel of panels) {
    const column = heights[0] <= heights[1] ? 0 : 1;
    const x = 20 + column * (panelWidth + 20);
    placed.push(renderPanel(panel, x, top + (heights[column] as number)));
    heights[column] = (heights[column] as number) + panelHeight(panel) + 16;
  }
  const height = top + Math.max(...heights) + 8;
  const labels: Record<Series, string> = {
    nimbusq: "nimbusq",
    bullmq: "BullMQ 6.7.0",
    other: "baseline / other services",
  };
  const legend = (["nimbusq", "bullmq", "other"] as const)
    .map((series, i) => {
      const x = 20 + i * 150;
      const label = labels[series];
      return `<rect x="${x}" y="52" width="12" height="12" rx="2" fill="${colors[series]}"/><text x="${x + 18}" y="62" font-size="12" fill="#1f2933">${label}</text>`;
    })
    .join("\n");
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="chart-title" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif">`,
    `<title id="chart-title">${escapeXml(`${title}: ${panels.map((p) => p.title).join("; ")}`)}</title>`,
    `<rect width="${width}" height="${height}" fill="#f5f7fa"/>`,
    `<text x="20" y="28" font-size="18" font-weight="700" fill="#1f2933">${escapeXml(title)}</text>`,
    `<text x="20" y="45" font-size="11.5" fill="#616e7c">${escapeXml(subtitle)}</text>`,
    legend,
    ...placed,
    "</svg>",
    "",
  ].join("\n");
}
