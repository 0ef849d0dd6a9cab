/**
 * The REPLY and CODES parts of a script's contract header (grammar in lua/README.md, "Replies"):
 * parses each field's type, checks the forms against each other, and writes the TypeScript type
 * that the generated `decode<Script>` returns. The parsed shapes are what core/redis/reply.ts reads
 * at run time (the generator writes them out as object literals of its `ReplySpec`).
 */

export type Element =
  | "int"
  | "string"
  | "string?"
  | "hash"
  | "code"
  | { literal: string }
  | { list: Content };
export type Unit = Element | { group: Field[] };
export type Content = Unit | { each: Unit };
export interface Field {
  name: string;
  type: Element | { each: Unit; count?: string };
}
export interface Form {
  name?: string;
  doc: string;
  fields: Field[];
  /** Each field's prose, by name. */
  docs: Record<string, string>;
}
export interface Code {
  name: string;
  value: number;
  doc: string;
}

/** One REPLY line as the header read it: the name, then the type and prose still together. */
export interface RawField {
  name: string;
  text: string;
}
export interface RawForm {
  name?: string;
  doc: string;
  fields: RawField[];
}

export class ReplyTypeError extends Error {}

const identifier = /^[a-z][A-Za-z0-9]*$/;
const scalars = ["int", "string?", "string", "hash", "code"] as const;

/** Splits "<type>  <prose>": the type has no blank outside its brackets and quotes. */
export function splitType(text: string): { type: string; doc: string } {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charAt(i);
    if (char === '"') quoted = !quoted;
    else if (!quoted && "({[".includes(char)) depth += 1;
    else if (!quoted && ")}]".includes(char)) depth -= 1;
    else if (!quoted && depth === 0 && /\s/.test(char))
      return { type: text.slice(0, i), doc: text.slice(i).trim() };
  }
  return { type: text, doc: "" };
}

/** A recursive-descent reader of one field's type. */
class TypeReader {
  private at = 0;
  constructor(private readonly text: string) {}

  private fail(problem: string): never {
    throw new ReplyTypeError(`type "${this.text}": ${problem} at character ${this.at + 1}`);
  }
  private skip(): void {
    while (/\s/.test(this.text.charAt(this.at))) this.at += 1;
  }
  private eat(token: string): boolean {
    this.skip();
    if (!this.text.startsWith(token, this.at)) return false;
    this.at += token.length;
    return true;
  }
  private expect(token: string): void {
    if (!this.eat(token)) this.fail(`expected "${token}"`);
  }
  private name(): string {
    this.skip();
    const match = /^[A-Za-z][A-Za-z0-9]*/.exec(this.text.slice(this.at));
    if (!match || !identifier.test(match[0])) this.fail("expected a camelCase name");
    this.at += match[0].length;
    return match[0];
  }

  element(): Element {
    if (this.eat('"')) {
      const end = this.text.indexOf('"', this.at);
      if (end < 0) this.fail("unclosed quote");
      const literal = this.text.slice(this.at, end);
      this.at = end + 1;
      return { literal };
    }
    if (this.eat("{")) {
      const unit = this.unit();
      const list: Content = this.eat("...") ? { each: unit } : unit;
      this.expect("}");
      return { list };
    }
    for (const scalar of scalars) {
      this.skip();
      const rest = this.text.slice(this.at);
      if (rest.startsWith(scalar) && !/^[A-Za-z0-9?]/.test(rest.slice(scalar.length))) {
        this.at += scalar.length;
        return scalar;
      }
    }
    return this.fail('expected int, string, string?, hash, code, "text" or {…}');
  }

  unit(): Unit {
    if (!this.eat("(")) return this.element();
    const fields: Field[] = [];
    do {
      const name = this.name();
      if (fields.some((field) => field.name === name)) this.fail(`"${name}" appears twice`);
      fields.push({ name, type: this.element() });
    } while (this.eat(","));
    this.expect(")");
    return { group: fields };
  }

  field(): Field["type"] {
    const unit = this.unit();
    let type: Field["type"];
    if (this.eat("...")) type = { each: unit };
    else if (this.eat("[")) {
      type = { each: unit, count: this.name() };
      this.expect("]");
    } else if (typeof unit === "object" && "group" in unit) {
      return this.fail("a group stands in a list: write {(…)}, (…)... or (…)[count]");
    } else type = unit;
    this.skip();
    if (this.at < this.text.length) this.fail("unexpected text");
    return type;
  }
}

export function parseType(text: string): Field["type"] {
  return new TypeReader(text).field();
}

function uses(type: Field["type"] | Content, test: (element: Element) => boolean): boolean {
  if (typeof type === "string") return test(type);
  if ("literal" in type) return test(type);
  if ("list" in type) return test(type) || uses(type.list, test);
  if ("group" in type) return type.group.some((field) => uses(field.type, test));
  return uses(type.each, test);
}

/** Parses and checks a script's forms; `where` prefixes every error. */
export function buildForms(where: string, raw: RawForm[], codes: Code[]): Form[] {
  const fail = (problem: string): never => {
    throw new ReplyTypeError(`${where}: ${problem}`);
  };
  if (raw.length > 1 && raw.some((form) => !form.name)) fail("a REPLY with several forms names each one");
  const forms: Form[] = [];
  for (const form of raw) {
    const label = form.name ? `REPLY ${form.name}` : "REPLY";
    if (forms.some((other) => other.name === form.name)) fail(`${label} is written twice`);
    const fields: Field[] = [];
    const docs: Record<string, string> = {};
    for (const [index, item] of form.fields.entries()) {
      if (!identifier.test(item.name)) fail(`${label}: "${item.name}" is not a camelCase name`);
      if (docs[item.name] !== undefined || (form.name && item.name === "form"))
        fail(`${label}: "${item.name}" is declared twice (or is "form")`);
      const { type: text, doc } = splitType(item.text);
      let type: Field["type"];
      try {
        type = parseType(text);
      } catch (error) {
        return fail(`${label}: ${item.name}: ${(error as Error).message}`);
      }
      if (typeof type === "object" && "each" in type) {
        const { count } = type;
        if (count === undefined && index !== form.fields.length - 1)
          fail(`${label}: ${item.name}: only the last field may take the rest (...)`);
        if (count !== undefined && fields.find((field) => field.name === count)?.type !== "int")
          fail(`${label}: ${item.name}: [${count}] must name an earlier int field`);
      }
      if (uses(type, (element) => element === "code") && codes.length === 0)
        fail(`${label}: ${item.name}: a code needs a CODES section`);
      fields.push({ name: item.name, type });
      docs[item.name] = doc;
    }
    forms.push({ ...(form.name ? { name: form.name } : {}), doc: form.doc, fields, docs });
  }
  return forms;
}

/** Checks a CODES line's number: return codes are negative integers. */
export function codeValue(text: string): number | undefined {
  return /^-[1-9]\d*$/.test(text) ? Number(text) : undefined;
}

const comment = (doc: string, indent: string): string =>
  doc ? `${indent}/** ${doc.replaceAll("*/", "*\\/")} */\n` : "";

function elementType(element: Element, codeType: string): string {
  if (element === "int") return "number";
  if (element === "string") return "string";
  if (element === "string?") return "string | null";
  if (element === "hash") return "string[]";
  if (element === "code") return codeType;
  if ("literal" in element) return JSON.stringify(element.literal);
  return contentType(element.list, codeType);
}

function unitType(unit: Unit, codeType: string): string {
  if (typeof unit === "object" && "group" in unit) {
    return `{ ${unit.group.map((field) => `${field.name}: ${fieldType(field.type, codeType)}`).join("; ")} }`;
  }
  return elementType(unit, codeType);
}

function contentType(content: Content, codeType: string): string {
  if (typeof content === "object" && "each" in content) return `Array<${unitType(content.each, codeType)}>`;
  return unitType(content, codeType);
}

function fieldType(type: Field["type"], codeType: string): string {
  if (typeof type === "object" && "each" in type) return `Array<${unitType(type.each, codeType)}>`;
  return elementType(type, codeType);
}

/** The TypeScript type of a decoded reply: one object type, or a union tagged by `form`. */
export function replyType(typeName: string, forms: Form[], codeType: string): string {
  const members = forms.map((form) => {
    const lines = form.fields.map(
      (field) =>
        `${comment(form.docs[field.name] ?? "", "    ")}    ${field.name}: ${fieldType(field.type, codeType)};`,
    );
    if (form.name) lines.unshift(`    form: "${form.name}";`);
    return `${comment(form.doc, "  ")}  | {\n${lines.join("\n")}\n  }`;
  });
  return `export type ${typeName} =\n${members.join("\n")};`;
}

/** The shape core/redis/reply.ts checks at run time (its ReplySpec). */
export function replyShape(script: string, forms: Form[], codes: Code[]) {
  const shapes = forms.map(({ name, fields }) => ({ ...(name ? { name } : {}), fields }));
  return { script, codes: codes.map((code) => code.value), forms: shapes };
}

/** replyShape as a TypeScript object literal. */
export function replySpec(script: string, forms: Form[], codes: Code[]): string {
  const shape = replyShape(script, forms, codes);
  return `{ script: "${script}", codes: ${JSON.stringify(shape.codes)}, forms: ${JSON.stringify(shape.forms)} }`;
}
