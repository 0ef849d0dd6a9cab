/**
 * Checks a script's reply against the REPLY part of its Lua header (lua/README.md, "Replies") and
 * names its parts. The generated `decode<Script>` functions (core/redis/generated/scripts.ts) hand
 * this module their script's shape; callers then read fields, never positions.
 *
 * Replies come through Upstash's REST API: a Lua number is an integer, Lua `false` is null, a table
 * is a list. A replayed call answers from its replay guard's text, so an `int` may also arrive as its
 * decimal text, and a text field may arrive as a number (an id counted by INCR).
 */
import { UnexpectedReplyError } from "../errors.ts";

/** One element of a reply. */
export type ReplyElement =
  | "int"
  | "string"
  | "string?"
  | "hash"
  | "code"
  | { readonly literal: string }
  | { readonly list: ReplyContent };

/** A group's fields lie side by side in the list that holds them. */
export type ReplyUnit = ReplyElement | { readonly group: readonly ReplyField[] };

/** What a nested list holds: one unit, or units to its end. */
export type ReplyContent = ReplyUnit | { readonly each: ReplyUnit };

export interface ReplyField {
  readonly name: string;
  /** `each` with `count`: that many units (count names an earlier int field); without: the rest. */
  readonly type: ReplyElement | { readonly each: ReplyUnit; readonly count?: string };
}

export interface ReplyForm {
  readonly name?: string;
  readonly fields: readonly ReplyField[];
}

export interface ReplySpec {
  readonly script: string;
  /** The script's CODES: the values a `code` element may take. */
  readonly codes: readonly number[];
  readonly forms: readonly ReplyForm[];
}

/** A reply that does not fit: says where and why, never the values (they can hold job data). */
class Misfit extends Error {}

const kindOf = (value: unknown): string =>
  Array.isArray(value) ? "a list" : value == null ? "nil" : `a ${typeof value}`;

function misfit(path: string, problem: string): never {
  throw new Misfit(`${path || "the reply"} ${problem}`);
}

function int(value: unknown, path: string): number {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^-?\d+$/.test(value)) return Number(value);
  return misfit(path, `is not an int (got ${kindOf(value)})`);
}

function text(value: unknown, path: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return misfit(path, `is not text (got ${kindOf(value)})`);
}

function list(value: unknown, path: string): readonly unknown[] {
  if (Array.isArray(value)) return value;
  return misfit(path, `is not a list (got ${kindOf(value)})`);
}

const isElement = (type: ReplyField["type"] | ReplyContent): type is ReplyElement =>
  typeof type === "string" || "literal" in type || "list" in type;

/** How many list elements a unit takes. */
const width = (unit: ReplyUnit): number => (isElement(unit) ? 1 : unit.group.length);

function element(spec: ReplySpec, type: ReplyElement, value: unknown, path: string): unknown {
  if (type === "int") return int(value, path);
  if (type === "string") return text(value, path);
  if (type === "string?") return value === null ? null : text(value, path);
  if (type === "code") {
    const code = int(value, path);
    return spec.codes.includes(code) ? code : misfit(path, "is not one of the script's codes");
  }
  if (type === "hash") {
    const flat = list(value, path);
    if (flat.length % 2 !== 0) misfit(path, "is not a flat field/value list (odd length)");
    return flat.map((item, i) => text(item, `${path}[${i}]`));
  }
  if ("literal" in type) {
    return value === type.literal ? value : misfit(path, `is not the text "${type.literal}"`);
  }
  return content(spec, type.list, list(value, path), path);
}

/** `units` units from `items` at `from`, as values (an element) or objects (a group). */
function units(
  spec: ReplySpec,
  unit: ReplyUnit,
  items: readonly unknown[],
  from: number,
  count: number,
  path: string,
): unknown[] {
  const out: unknown[] = [];
  const size = width(unit);
  for (let i = 0; i < count; i++) {
    const at = from + i * size;
    out.push(
      isElement(unit)
        ? element(spec, unit, items[at], `${path}[${i}]`)
        : group(spec, unit.group, items, at, `${path}[${i}]`),
    );
  }
  return out;
}

function group(
  spec: ReplySpec,
  fields: readonly ReplyField[],
  items: readonly unknown[],
  from: number,
  path: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [i, field] of fields.entries()) {
    const where = path ? `${path}.${field.name}` : field.name;
    if (from + i >= items.length) misfit(where, "is missing");
    out[field.name] = element(spec, field.type as ReplyElement, items[from + i], where);
  }
  return out;
}

function content(spec: ReplySpec, inner: ReplyContent, items: readonly unknown[], path: string): unknown {
  if (isElement(inner)) {
    if (items.length !== 1) misfit(path, `holds ${items.length} elements, not 1`);
    return element(spec, inner, items[0], `${path}[0]`);
  }
  if ("group" in inner) {
    if (items.length !== inner.group.length)
      misfit(path, `holds ${items.length} elements, not ${inner.group.length}`);
    return group(spec, inner.group, items, 0, path);
  }
  const size = width(inner.each);
  if (items.length % size !== 0) misfit(path, `holds ${items.length} elements, not groups of ${size}`);
  return units(spec, inner.each, items, 0, items.length / size, path);
}

/** A list of fields, side by side; a lone element field is the whole reply. */
function form(spec: ReplySpec, shape: ReplyForm, reply: unknown): Record<string, unknown> {
  const named = shape.name === undefined ? {} : { form: shape.name };
  const only = shape.fields.length === 1 ? shape.fields[0] : undefined;
  if (only && isElement(only.type)) return { ...named, [only.name]: element(spec, only.type, reply, "") };
  const items = list(reply, "");
  const out: Record<string, unknown> = { ...named };
  let at = 0;
  for (const field of shape.fields) {
    const { type } = field;
    if (isElement(type)) {
      if (at >= items.length) misfit(field.name, "is missing");
      out[field.name] = element(spec, type, items[at], field.name);
      at += 1;
      continue;
    }
    const size = width(type.each);
    const left = items.length - at;
    const count = type.count === undefined ? left / size : (out[type.count] as number);
    if (!Number.isInteger(count) || count < 0 || count * size > left) {
      misfit(field.name, `needs ${type.count ? `${type.count} × ` : "whole groups of "}${size} elements`);
    }
    out[field.name] = units(spec, type.each, items, at, count, field.name);
    at += count * size;
  }
  if (at < items.length) misfit("", `has ${items.length - at} elements more than its fields`);
  return out;
}

/** A form with a code or a fixed text in it answers only that: it is tried before the others. */
function narrow(type: ReplyField["type"] | ReplyContent): boolean {
  if (typeof type === "string") return type === "code";
  if ("literal" in type) return true;
  if ("list" in type) return narrow(type.list);
  if ("group" in type) return type.group.some((field) => narrow(field.type));
  return narrow(type.each);
}

/**
 * The reply's fields, named, under the first form it fits (`forms`: only those the caller expects);
 * a script with several forms adds `form`, the one it fit. UnexpectedReplyError when none fits.
 */
export function decodeReply(
  spec: ReplySpec,
  reply: unknown,
  forms?: readonly string[],
): Record<string, unknown> {
  const allowed = spec.forms.filter((shape) => !forms || forms.includes(shape.name ?? ""));
  const ordered = [
    ...allowed.filter((shape) => shape.fields.some((field) => narrow(field.type))),
    ...allowed.filter((shape) => !shape.fields.some((field) => narrow(field.type))),
  ];
  const problems: string[] = [];
  for (const shape of ordered) {
    try {
      return form(spec, shape, reply);
    } catch (error) {
      if (!(error instanceof Misfit)) throw error;
      problems.push(shape.name ? `as ${shape.name}: ${error.message}` : error.message);
    }
  }
  throw new UnexpectedReplyError(`${spec.script}: unexpected reply: ${problems.join("; ") || "no form"}`);
}
