/**
 * A CloudFormation template as the stack would hold it: resources and outputs whose `Condition` is
 * false left out, and every `Fn::If` replaced by the branch its condition picks (`AWS::NoValue`
 * removed). Conditions here compare literal strings, as osls writes them once `${param:…}` is resolved.
 */
import type { CloudFormationTemplate } from "./service.ts";

type Json = unknown;

const noValue = Symbol("AWS::NoValue");

export function deployed(template: CloudFormationTemplate): CloudFormationTemplate {
  const conditions = template.Conditions ?? {};
  const memo = new Map<string, boolean>();
  const condition = (name: string): boolean => {
    if (!memo.has(name)) {
      if (!(name in conditions)) throw new Error(`the template has no condition ${name}`);
      memo.set(name, truth(conditions[name]));
    }
    return memo.get(name) as boolean;
  };
  const truth = (expression: Json): boolean => {
    const [fn, args] = Object.entries(expression as Record<string, Json[]>)[0] ?? [];
    if (fn === "Condition") return condition(args as unknown as string);
    const values = args ?? [];
    if (fn === "Fn::Equals") return resolve(values[0]) === resolve(values[1]);
    if (fn === "Fn::Not") return !truth(values[0]);
    if (fn === "Fn::And") return values.every(truth);
    if (fn === "Fn::Or") return values.some(truth);
    throw new Error(`condition function ${String(fn)} is not supported here`);
  };
  const resolve = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(resolve).filter((item) => item !== noValue);
    if (typeof value !== "object" || value === null) return value;
    const entries = Object.entries(value);
    if (entries.length === 1 && entries[0]?.[0] === "Fn::If") {
      const [name, whenTrue, whenFalse] = entries[0][1] as [string, Json, Json];
      return resolve(condition(name) ? whenTrue : whenFalse);
    }
    if (entries.length === 1 && entries[0]?.[0] === "Ref" && entries[0][1] === "AWS::NoValue") return noValue;
    const out: Record<string, Json> = {};
    for (const [key, item] of entries) {
      const resolved = resolve(item);
      if (resolved !== noValue) out[key] = resolved;
    }
    return out;
  };
  const keep = (entry: Json) => {
    const name = (entry as { Condition?: string }).Condition;
    return name === undefined || condition(name);
  };
  const pick = <T>(section: Record<string, T> | undefined) =>
    Object.fromEntries(
      Object.entries(section ?? {})
        .filter(([, entry]) => keep(entry))
        .map(([id, entry]) => [id, resolve(entry) as T]),
    );
  return { Resources: pick(template.Resources), Outputs: pick(template.Outputs) };
}
