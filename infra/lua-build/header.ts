/**
 * Parses the contract header every `lua/*.lua` script opens with (STYLE.md §4):
 *
 *   --[[
 *   <name>: <purpose, one or more lines>
 *
 *   KEYS
 *     <name>  <meaning>
 *   KEYS repeated <group>
 *     <name>  <meaning>
 *   ARGV
 *     <name>  <type>  <meaning>
 *   ARGV repeated <group>
 *     <name>  <type>  <meaning>
 *   REPLY [<form>]  [<prose>]
 *     <name>  <type>  <meaning>
 *   CODES
 *     <name>  <negative number>  <meaning>
 *   EVENTS
 *     <free text>
 *   GLOBAL LOCK  [<free text: why the script cannot declare every key it touches>]
 *     [<more of it>]
 *   ]]
 *
 * A `repeated` section is a group of positions that repeats to the end of KEYS or ARGV (one group per
 * queue, per job…). Item lines are indented two spaces; deeper indentation continues a description
 * (or a reply type still inside its brackets). REPLY describes the reply's shape, one section per
 * form it can take (grammar: lua/README.md and reply-type.ts); a prose RETURNS may stand beside it.
 */
import { buildForms, type Code, codeValue, type Form, type RawForm, ReplyTypeError } from "./reply-type.ts";

export interface HeaderItem {
  name: string;
  doc: string;
  /** An ARGV item's type (argType); KEYS are always key names. */
  type?: string;
}

/**
 * The types an ARGV item may take, and what a caller passes for each: `int` a number (an integer),
 * `int?` a number or "" for none, `flag` "1" or "", `string` any text, and a union of quoted texts
 * (`"wait"|"lifo"`) exactly those.
 */
export function argType(token: string): string | undefined {
  if (token === "int") return "number";
  if (token === "int?") return 'number | ""';
  if (token === "flag") return '"1" | ""';
  if (token === "string") return "string";
  if (/^"[^"|\s]*"(?:\|"[^"|\s]*")+$/.test(token)) return token.split("|").join(" | ");
  return undefined;
}

export interface HeaderSection {
  fixed: HeaderItem[];
  /** The repeated group's name (a property name in TypeScript) and its items, if any. */
  group?: { name: string; items: HeaderItem[] };
}

export interface ScriptHeader {
  name: string;
  purpose: string;
  keys: HeaderSection;
  argv: HeaderSection;
  /** Prose beside REPLY, where the fields' descriptions cannot say it all. */
  returns: string;
  events: string;
  /** The reply's forms (empty only in a header without REPLY, which buildScript refuses). */
  reply: Form[];
  codes: Code[];
  /** OUTCOMES: names for the positive values a reply field takes (created, duplicated…). */
  outcomes: Code[];
  /** GLOBAL LOCK: why a script without `allow-key-locking` cannot declare every key it touches. */
  globalLock: string;
}

const identifier = /^[a-z][A-Za-z0-9]*$/;

export class HeaderError extends Error {
  override readonly name = "HeaderError";
}

export function parseHeader(fileName: string, source: string): ScriptHeader {
  const match = /^--\[\[\n([\s\S]*?)\n\]\]/.exec(source);
  if (!match?.[1]) throw new HeaderError(`${fileName}: missing the --[[ … ]] contract header on line 1`);
  const lines = match[1].split("\n");
  const first = /^([a-zA-Z0-9]+): (.+)$/.exec(lines[0] ?? "");
  if (!first?.[1] || !first[2])
    throw new HeaderError(`${fileName}: header must start with "<name>: <purpose>"`);
  const expectedName = fileName.replace(/\.lua$/, "");
  if (first[1] !== expectedName) {
    throw new HeaderError(`${fileName}: header names the script "${first[1]}", expected "${expectedName}"`);
  }
  const header: ScriptHeader = {
    name: first[1],
    purpose: first[2],
    keys: { fixed: [] },
    argv: { fixed: [] },
    returns: "",
    events: "",
    reply: [],
    codes: [],
    outcomes: [],
    globalLock: "",
  };
  let section:
    | "purpose"
    | "keys"
    | "argv"
    | "returns"
    | "events"
    | "globalLock"
    | "reply"
    | "codes"
    | "outcomes" = "purpose";
  let items: HeaderItem[] = [];
  const forms: RawForm[] = [];
  for (const [index, line] of lines.slice(1).entries()) {
    const where = `${fileName}: header line ${index + 2}`;
    const replyMatch = /^REPLY(?: ([a-z][A-Za-z0-9]*))?(?: {2,}(.*))?$/.exec(line);
    if (replyMatch || line === "CODES") {
      if (replyMatch) forms.push({ name: replyMatch[1], doc: replyMatch[2]?.trim() ?? "", fields: [] });
      else if (header.codes.length > 0 || section === "codes") throw new HeaderError(`${where}: CODES twice`);
      section = replyMatch ? "reply" : "codes";
      continue;
    }
    const sectionMatch = /^(KEYS|ARGV|RETURNS|EVENTS)(?: repeated ([a-z][A-Za-z0-9]*))?$/.exec(line);
    if (sectionMatch?.[1]) {
      const kind = sectionMatch[1];
      const group = sectionMatch[2];
      if (kind === "RETURNS" || kind === "EVENTS") {
        if (group) throw new HeaderError(`${where}: ${kind} cannot be repeated`);
        section = kind === "RETURNS" ? "returns" : "events";
        continue;
      }
      section = kind === "KEYS" ? "keys" : "argv";
      const target = header[section];
      if (group) {
        if (target.group) throw new HeaderError(`${where}: only one repeated ${kind} group is allowed`);
        target.group = { name: group, items: [] };
        items = target.group.items;
      } else {
        if (target.fixed.length > 0 || target.group) {
          throw new HeaderError(`${where}: fixed ${kind} must come once, before the repeated group`);
        }
        items = target.fixed;
      }
      continue;
    }
    const lockMatch = /^GLOBAL LOCK(?: {2,}(.*))?$/.exec(line);
    if (lockMatch) {
      if (header.globalLock || section === "globalLock") throw new HeaderError(`${where}: GLOBAL LOCK twice`);
      section = "globalLock";
      if (lockMatch[1]) header.globalLock = `${lockMatch[1].trim()}\n`;
      continue;
    }
    if (line === "OUTCOMES") {
      if (header.outcomes.length > 0 || section === "outcomes")
        throw new HeaderError(`${where}: OUTCOMES twice`);
      section = "outcomes";
      continue;
    }
    if (section === "outcomes") {
      outcomeLine(header, line, where);
      continue;
    }
    if (section === "reply" || section === "codes") {
      replyLine(header, forms, section, line, where);
      continue;
    }
    if (section === "purpose") {
      header.purpose += line.trim() ? ` ${line.trim()}` : "";
      continue;
    }
    if (section === "returns" || section === "events" || section === "globalLock") {
      header[section] += `${line.trim()}\n`;
      continue;
    }
    if (!line.trim()) continue;
    const item = /^ {2}(\S+)(?:\s+(.*))?$/.exec(line);
    if (item?.[1]) {
      if (!identifier.test(item[1])) throw new HeaderError(`${where}: "${item[1]}" is not a camelCase name`);
      const all = [...header[section].fixed, ...(header[section].group?.items ?? [])];
      if (all.some((existing) => existing.name === item[1])) {
        throw new HeaderError(`${where}: "${item[1]}" is declared twice`);
      }
      items.push(
        section === "argv"
          ? argvItem(item[1], item[2] ?? "", where)
          : { name: item[1], doc: item[2]?.trim() ?? "" },
      );
      continue;
    }
    const last = items[items.length - 1];
    if (/^ {4,}\S/.test(line) && last) {
      last.doc += ` ${line.trim()}`;
      continue;
    }
    throw new HeaderError(
      `${where}: expected "  <name>  <meaning>" (ARGV: "  <name>  <type>  <meaning>"), got "${line}"`,
    );
  }
  header.returns = header.returns.trim();
  header.events = header.events.trim();
  header.globalLock = header.globalLock.trim();
  if (!header.returns && forms.length === 0)
    throw new HeaderError(`${fileName}: header has no REPLY section (nor a RETURNS in prose)`);
  try {
    header.reply = buildForms(fileName, forms, header.codes);
  } catch (error) {
    if (error instanceof ReplyTypeError) throw new HeaderError(error.message);
    throw error;
  }
  if (!header.events) throw new HeaderError(`${fileName}: header has no EVENTS section (write "none")`);
  return header;
}

/** An ARGV line's name, type and meaning: every argument says what its callers pass. */
function argvItem(name: string, rest: string, where: string): HeaderItem {
  const [, token = "", doc = ""] = /^(\S*)\s*(.*)$/.exec(rest.trim()) ?? [];
  if (argType(token) === undefined) {
    throw new HeaderError(
      `${where}: "${name}" needs a type (int, int?, flag, string or "a"|"b"), got "${token}"`,
    );
  }
  return { name, type: token, doc };
}

/** One line of a REPLY or CODES section: an item, or the continuation of the one before. */
function replyLine(
  header: ScriptHeader,
  forms: RawForm[],
  section: "reply" | "codes",
  line: string,
  where: string,
): void {
  if (!line.trim()) return;
  const form = forms[forms.length - 1] as RawForm;
  if (/^ {4,}\S/.test(line)) {
    const last =
      section === "codes" ? header.codes[header.codes.length - 1] : form.fields[form.fields.length - 1];
    if (last && "text" in last) last.text += ` ${line.trim()}`;
    else if (last) last.doc += ` ${line.trim()}`;
    else if (section === "reply") form.doc += ` ${line.trim()}`;
    else throw new HeaderError(`${where}: a continued line needs a code before it`);
    return;
  }
  const item = /^ {2}(\S+)\s+(\S.*)$/.exec(line);
  if (!item?.[1] || !item[2])
    throw new HeaderError(`${where}: expected "  <name>  <type or code>  <meaning>"`);
  if (section === "reply") {
    form.fields.push({ name: item[1], text: item[2] });
    return;
  }
  const [value = "", ...doc] = item[2].split(/\s+/);
  const code = codeValue(value);
  if (!identifier.test(item[1]) || code === undefined)
    throw new HeaderError(`${where}: expected "  <camelCase name>  <negative number>  <meaning>"`);
  if (header.codes.some((other) => other.name === item[1] || other.value === code))
    throw new HeaderError(`${where}: "${item[1]}" (${code}) repeats a name or a number`);
  header.codes.push({ name: item[1], value: code, doc: doc.join(" ") });
}

/** One line of OUTCOMES: `  <camelCase name>  <value ≥ 0>  <meaning>`, or a continuation. */
function outcomeLine(header: ScriptHeader, line: string, where: string): void {
  if (!line.trim()) return;
  const last = header.outcomes[header.outcomes.length - 1];
  if (/^ {4,}\S/.test(line) && last) {
    last.doc += ` ${line.trim()}`;
    return;
  }
  const item = /^ {2}([a-z][A-Za-z0-9]*)\s+(\d+)(?:\s+(.*))?$/.exec(line);
  if (!item?.[1] || item[2] === undefined)
    throw new HeaderError(`${where}: expected "  <camelCase name>  <number ≥ 0>  <meaning>"`);
  const value = Number(item[2]);
  // Values may repeat: the outcomes of different reply fields (a status, a per-job code) share numbers.
  if (header.outcomes.some((other) => other.name === item[1]))
    throw new HeaderError(`${where}: "${item[1]}" repeats a name`);
  header.outcomes.push({ name: item[1], value, doc: item[3]?.trim() ?? "" });
}
