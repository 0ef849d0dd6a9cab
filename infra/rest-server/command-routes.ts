/**
 * `POST /`, `/pipeline` and `/multi-exec`: read the body, refuse what Upstash would refuse (commands it
 * lacks; in Upstash mode, Redis 7.0-only forms), run the rest on Redis with scripts rewritten
 * (`script-rewrites.ts`), bill them, and answer in Upstash's shapes — or apply an injected fault.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { UsageMeter } from "./billing.ts";
import { rejectionOf } from "./command-policy.ts";
import { BadRequest, type Command, type Endpoint, parseCommands } from "./command-request.ts";
import type { Backend } from "./execute.ts";
import type { Fault, FaultInjector } from "./faults.ts";
import { isJsonContentType, readBody, sendError, sendJson } from "./http-io.ts";
import { upstashModeRefusal } from "./redis62.ts";
import { type Encoding, entryJson, errorJson, resultJson } from "./reply-json.ts";
import type { ScriptRewrites } from "./script-rewrites.ts";

export interface Context {
  readonly token: string;
  readonly maxBodyBytes: number;
  readonly upstashMode: boolean;
  /** Refuse Redis 7.0-only forms and shebangs other than allow-key-locking (RestServerOptions.redis62). */
  readonly redis62: boolean;
  readonly backend: Backend;
  readonly meter: UsageMeter;
  readonly faults: FaultInjector;
  readonly scripts: ScriptRewrites;
  /** The answers' `Date` header is this far from the clock (ms; tests of the clock check). */
  readonly dateOffsetMs: number;
  nextSyncToken(): string;
}

/** Upstash's answer to a body over its request limit (its docs give the text, not the status). */
export const TOO_LARGE = "ERR max request size exceeded";

const SERVICE_UNAVAILABLE_PAGE =
  "<html><head><title>503 Service Temporarily Unavailable</title></head>" +
  "<body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>\n";

/** A JSON answer: status and body. */
interface Answer {
  status: number;
  json: string;
}

/** What to do with a command request: apply a fault, answer, or both (`drop-after` runs, then drops). */
interface Outcome {
  fault: Fault | null;
  answer?: Answer;
}

/** Why each command is refused without reaching Redis, or null; counts Upstash-mode refusals. */
function rejectionsOf(context: Context, commands: readonly Command[]): (string | null)[] {
  let refused = 0;
  const rejections = commands.map((command) => {
    const rejection = rejectionOf(command);
    if (rejection !== null || !context.redis62) return rejection;
    const refusal = upstashModeRefusal(command);
    if (refusal !== null) refused += 1;
    return refusal;
  });
  context.meter.countUpstashRefusals(refused);
  return rejections;
}

async function answerCommands(
  context: Context,
  endpoint: Endpoint,
  body: Buffer,
  encoding: Encoding,
): Promise<Outcome> {
  const commands = parseCommands(body, endpoint);
  const fault = context.faults.take(commands.map((command) => command.name));
  if (fault?.kind === "delay") await sleep(fault.delayMs);
  if (fault && fault.kind !== "delay" && fault.kind !== "drop-after" && fault.kind !== "delay-answer")
    return { fault };
  const rejections = rejectionsOf(context, commands);
  let answer: Answer;
  if (endpoint === "multi-exec") {
    const refused = rejections.find((rejection) => rejection !== null);
    if (refused) return { fault, answer: { status: 400, json: errorJson(refused) } };
    const plan = context.scripts.plan(commands);
    const outcome = await context.meter.run(commands, ["multi", "exec"], () =>
      context.backend.transaction(plan.commands),
    );
    if (outcome.kind === "discarded") {
      answer = { status: 400, json: errorJson(outcome.error) };
    } else {
      const settled = await context.scripts.settle(plan, outcome.replies, null);
      context.meter.countScripts(settled);
      answer = {
        status: 200,
        json: `[${settled.replies.map((reply) => entryJson(reply, encoding)).join(",")}]`,
      };
    }
  } else {
    const allowed = commands.filter((_, index) => rejections[index] === null);
    const plan = context.scripts.plan(allowed);
    const retried: string[] = [];
    const settled = await context.meter.run(allowed, retried, async () => {
      const sent = await context.backend.pipeline(plan.commands);
      return await context.scripts.settle(plan, sent, (command) => {
        retried.push(command.name);
        return context.backend.call(command);
      });
    });
    context.meter.countScripts(settled);
    const replies = settled.replies;
    let next = 0;
    const entries = rejections.map((rejection) => {
      if (rejection !== null) return { kind: "error", text: rejection } as const;
      const reply = replies[next++];
      if (!reply) throw new Error("redis sent fewer replies than commands");
      return reply;
    });
    const [first] = entries;
    if (endpoint === "pipeline") {
      answer = { status: 200, json: `[${entries.map((entry) => entryJson(entry, encoding)).join(",")}]` };
    } else if (!first) {
      throw new Error("a single-command request produced no reply");
    } else if (first.kind === "error") {
      answer = { status: 400, json: errorJson(first.text) };
    } else {
      answer = { status: 200, json: `{"result":${resultJson(first, encoding)}}` };
    }
  }
  return { fault, answer };
}

export async function handleCommands(
  context: Context,
  endpoint: Endpoint,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  context.meter.countRequest();
  const body = await readBody(request, context.maxBodyBytes);
  if (body.kind === "too-large") return sendError(response, 400, TOO_LARGE);
  if (!isJsonContentType(request.headers["content-type"])) {
    return sendError(response, 400, "ERR content-type must be application/json");
  }
  const encodingHeader = request.headers["upstash-encoding"];
  const encoding: Encoding = String(encodingHeader ?? "").toLowerCase() === "base64" ? "base64" : "utf8";
  let result: Outcome;
  try {
    result = await answerCommands(context, endpoint, body.body, encoding);
  } catch (error) {
    if (error instanceof BadRequest) return sendError(response, 400, error.message);
    return sendError(response, 500, `ERR redis request failed: ${(error as Error).message}`);
  }
  const { fault, answer } = result;
  if (fault?.kind === "delay-answer") await sleep(fault.delayMs);
  if (fault?.kind === "fail-before" || fault?.kind === "drop-after") {
    request.socket.destroy();
  } else if (fault?.kind === "status-500") {
    sendError(response, 500, "ERR injected fault: internal server error");
  } else if (fault?.kind === "status-503") {
    response.writeHead(503, { "content-type": "text/html" });
    response.end(SERVICE_UNAVAILABLE_PAGE);
  } else if (answer) {
    const headers: Record<string, string> =
      answer.status === 200 ? { "upstash-sync-token": context.nextSyncToken() } : {};
    sendJson(response, answer.status, answer.json, headers);
  }
}
