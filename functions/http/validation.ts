/**
 * Turns a failed schema check into the API's one error shape: `400 invalid_request`, `field` naming
 * the input as a client wrote it (`opts.priority`, `[3].opts.delay`, `body` for the whole body, a
 * query parameter, a header) and a message stating the rule the schema's check carries. Used by
 * api-route.ts for path, query and header parameters, and by `validBody` for JSON bodies.
 */

import type { Context } from "hono";
import type * as z from "zod/mini";
import type { AppEnv } from "./app-env.ts";
import { type HttpError, invalid } from "./http-errors.ts";
import { readJsonBody } from "./request-body.ts";

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

/** `[1].opts.delay`, `opts.priority`; the root of a JSON body is `body`, of anything else its target. */
export function fieldOf(path: Path, target: string): string {
  if (path.length === 0) return target === "json" ? "body" : target;
  return path
    .map((step, i) => (typeof step === "number" ? `[${step}]` : i === 0 ? String(step) : `.${String(step)}`))
    .join("");
}

/** An unknown field first: a misspelt field explains the missing one it was meant to be. */
function firstOf(issues: readonly Issue[]): Issue | undefined {
  return issues.find((issue) => issue.code === "unrecognized_keys") ?? issues[0];
}

/**
 * The issue that explains a failure best. For a union (a job or an array of jobs; a count or an
 * object), the branch that accepted the value's type says what is wrong inside it; when no branch (or
 * more than one) did, the union's own rule does.
 */
function decisive(issue: Issue, at: Path): { issue: Issue; path: Path } {
  const path = [...at, ...issue.path];
  if (issue.code !== "invalid_union") return { issue, path };
  const typed = issue.errors.filter(
    (branch) => !(branch.length === 1 && branch[0]?.code === "invalid_type" && branch[0].path.length === 0),
  );
  const first = typed.length === 1 && typed[0] ? firstOf(typed[0]) : undefined;
  return first ? decisive(first, path) : { issue, path };
}

/** The HttpError for the first failed check of a value checked as `target` (json, query, param, header). */
export function refusal(issues: readonly Issue[], target: string): HttpError {
  const head = firstOf(issues);
  if (!head) return invalid(target, `${target} is not valid`);
  const { issue, path } = decisive(head, []);
  if (issue.code === "unrecognized_keys") {
    const [key] = issue.keys;
    const field = fieldOf([...path, key ?? ""], target);
    const where = path.length === 0 ? "" : ` in ${fieldOf(path, target)}`;
    return invalid(field, `unknown field "${key}"${where}: see the operation's schema in /openapi.json`);
  }
  const field = fieldOf(path, target);
  return invalid(field, `${field === "body" ? "the body" : field} must be ${issue.message}`);
}

/**
 * The JSON body read within the size limit (request-body.ts: 413, 415, invalid_json) and checked
 * against `schema`. An optional body may be left out (or empty, whatever its declared type, as
 * `curl -X POST -d ''` sends it): it is checked as `{}`, so the schema's defaults apply.
 */
export async function validBody<S extends z.ZodMiniType>(
  c: Context<AppEnv>,
  schema: S,
  body: { required: boolean; limit: number },
): Promise<z.output<S>> {
  const value = (await readJsonBody(c.req.raw, body.limit, body.required)) ?? {};
  const result = await schema.safeParseAsync(value);
  if (!result.success) throw refusal(result.error.issues, "json");
  return result.data;
}
