/**
 * Job ids derived from a record's identity in its AWS source, so that a redelivered record (at-least-once
 * delivery, Lambda retries) resolves to the job it already made instead of a second one.
 *
 * A derived id is `<source>-<identity>` with `%`, `:` and `#` percent-encoded:
 * - the `<source>-` prefix keeps it from ever being an integer, `0` or `0:…` (BullMQ reserves those for
 *   its counter) and keeps the sources apart;
 * - `:` is encoded because BullMQ accepts it only in the 3-segment form, and S3 keys or ARNs may hold any
 *   number of them;
 * - `#` is encoded because it is the separator of the per-job index (see `indexedJobId`), and `%` so the
 *   encoding stays reversible: two identities never share an id.
 * An identity too long for BullMQ's 1,024 characters (an S3 key may be 1,024 bytes on its own) becomes
 * `<source>#<sha256 hex>`, which no encoded id can equal because encoded ids contain no `#`.
 */
import { createHash } from "node:crypto";

/** Longest readable id; leaves room under BullMQ's 1,024 for a `#<index>` suffix. */
const maxReadableLength = 1000;

export function derivedJobId(source: string, identity: string): string {
  const encoded = identity.replace(/[%:#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const id = `${source}-${encoded}`;
  if (id.length <= maxReadableLength) return id;
  return `${source}#${createHash("sha256").update(identity, "utf8").digest("hex")}`;
}

/** The id of the `index`-th job of a record whose map returned an array. */
export function indexedJobId(id: string, index: number): string {
  return `${id}#${index}`;
}
