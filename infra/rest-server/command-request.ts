/**
 * Reads the JSON bodies of `/`, `/pipeline` and `/multi-exec` into Redis commands. Argument conversion
 * mirrors what the client sends: numbers arrive as JSON numbers and must become JS `String(n)` (the
 * text the client would have produced), booleans become "true"/"false". `null` (an `undefined` in the
 * caller's code) and objects are refused, so such bugs surface instead of storing "null".
 */

/** A command ready for Redis, with its lower-case name for policy checks and statistics. */
export interface Command {
  readonly name: string;
  readonly args: readonly string[];
}

export type Endpoint = "single" | "pipeline" | "multi-exec";

/** A request the server must refuse with 400 before anything runs. */
export class BadRequest extends Error {
  override readonly name = "BadRequest";
}

function convertArgument(value: unknown, position: string): string {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
      return String(value);
    case "boolean":
      return value ? "true" : "false";
    default: {
      const shown = value === null ? "null" : Array.isArray(value) ? "an array" : "an object";
      throw new BadRequest(
        `ERR invalid argument ${position}: ${shown} (arguments must be strings, numbers or booleans)`,
      );
    }
  }
}

function convertCommand(value: unknown, where: string): Command {
  if (!Array.isArray(value)) {
    throw new BadRequest(`ERR ${where} must be a JSON array like ["SET","key","value"]`);
  }
  if (value.length === 0) throw new BadRequest(`ERR empty command${where === "body" ? "" : ` (${where})`}`);
  const args = value.map((item, index) =>
    convertArgument(item, where === "body" ? `at index ${index}` : `at index ${index} of ${where}`),
  );
  const name = (args[0] as string).toLowerCase();
  return { name, args };
}

/** Parses a request body for `endpoint`; throws BadRequest naming the problem. */
export function parseCommands(body: Buffer, endpoint: Endpoint): Command[] {
  if (body.length === 0) throw new BadRequest("ERR empty request body: expected a JSON array");
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new BadRequest(`ERR request body is not valid JSON: ${reason}`);
  }
  if (endpoint === "single") return [convertCommand(parsed, "body")];
  const example = '[["SET","key","value"],["GET","key"]]';
  if (!Array.isArray(parsed)) {
    throw new BadRequest(`ERR ${endpoint} body must be a JSON array of commands like ${example}`);
  }
  if (parsed.length === 0) throw new BadRequest(`ERR ${endpoint} body holds no commands`);
  return parsed.map((command, index) => convertCommand(command, `command ${index + 1}`));
}
