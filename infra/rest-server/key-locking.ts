/**
 * Upstash's `allow-key-locking` script flag, in front of a Redis that does not know it. A flagged
 * script is sent to Redis rewritten (see `lua-key-check.ts`), so its SHA-1 there differs from the one
 * the client computed over the original text. This module keeps the client SHA → rewritten script map
 * and translates EVAL, EVAL_RO, EVALSHA, EVALSHA_RO, SCRIPT LOAD and SCRIPT EXISTS both ways, so clients
 * only ever see their own SHAs. Unflagged scripts and unknown SHAs pass through untouched.
 *
 * When Redis has lost a rewritten script (restart, SCRIPT FLUSH), a request made of that single EVALSHA
 * is retried as EVAL of the rewritten source. In a longer pipeline or a transaction the other commands
 * have already run, so the NOSCRIPT goes back to the client, which falls back to EVAL as it would on
 * Upstash.
 */
import { createHash } from "node:crypto";
import type { Command } from "./command-request.ts";
import { flaggedShebang, type KeyPositions, transformFlagged, VIOLATION_MARK } from "./lua-key-check.ts";
import type { RespReply } from "./resp-client.ts";

interface Rewritten {
  readonly clientSha: string;
  readonly source: string;
  readonly redisSha: string;
}

/** What translation did to one command, for fixing its reply. */
type Step =
  | { readonly kind: "plain" }
  /** A flagged script runs; `retry` is the EVAL to send if Redis answers NOSCRIPT. */
  | { readonly kind: "run"; readonly script: Rewritten; readonly retry: Command | null }
  /** SCRIPT LOAD of a flagged script: Redis answers the rewritten SHA, the client expects its own. */
  | { readonly kind: "load"; readonly script: Rewritten };

export interface ScriptPlan {
  /** The commands to send to Redis, one per request command, in order. */
  readonly commands: readonly Command[];
  readonly steps: readonly Step[];
}

export interface Settled {
  readonly replies: RespReply[];
  /** Flagged script runs Redis executed. */
  readonly calls: number;
  /** Replies carrying a declared-keys refusal. */
  readonly violations: number;
}

const PLAIN: Step = { kind: "plain" };

function sha1(text: string): string {
  return createHash("sha1").update(text, "utf8").digest("hex");
}

function countViolations(reply: RespReply): number {
  if (reply.kind === "error") return reply.text.includes(VIOLATION_MARK) ? 1 : 0;
  if (reply.kind !== "array") return 0;
  let total = 0;
  for (const item of reply.items) total += countViolations(item);
  return total;
}

export class KeyLocking {
  private readonly scripts = new Map<string, Rewritten>();

  /** `positions` null: declared-keys mode off, flags are stripped but keys are not checked. */
  constructor(private readonly positions: KeyPositions | null) {}

  /** The rewritten form of `source`, or null when it is not a flagged script. */
  private rewrite(source: string): Rewritten | null {
    const shebang = flaggedShebang(source);
    if (!shebang) return null;
    const clientSha = sha1(source);
    let script = this.scripts.get(clientSha);
    if (!script) {
      const rewritten = transformFlagged(source, shebang, this.positions);
      script = { clientSha, source: rewritten, redisSha: sha1(rewritten) };
      this.scripts.set(clientSha, script);
    }
    return script;
  }

  private known(sha: string | undefined): Rewritten | undefined {
    return sha === undefined ? undefined : this.scripts.get(sha.toLowerCase());
  }

  private translate(command: Command): { command: Command; step: Step } {
    const [name, first, ...rest] = command.args;
    if (name === undefined || first === undefined) return { command, step: PLAIN };
    switch (command.name) {
      case "eval":
      case "eval_ro": {
        const script = this.rewrite(first);
        if (!script) break;
        return {
          command: { name: command.name, args: [name, script.source, ...rest] },
          step: { kind: "run", script, retry: null },
        };
      }
      case "evalsha":
      case "evalsha_ro": {
        const script = this.known(first);
        if (!script) break;
        const evalName = command.name === "evalsha" ? "eval" : "eval_ro";
        const retry = { name: evalName, args: [evalName.toUpperCase(), script.source, ...rest] };
        return {
          command: { name: command.name, args: [name, script.redisSha, ...rest] },
          step: { kind: "run", script, retry },
        };
      }
      case "script": {
        const sub = first.toLowerCase();
        if (sub === "load" && rest.length === 1 && rest[0] !== undefined) {
          const script = this.rewrite(rest[0]);
          if (!script) break;
          return {
            command: { name: "script", args: [name, first, script.source] },
            step: { kind: "load", script },
          };
        }
        if (sub === "exists") {
          const shas = rest.map((sha) => this.known(sha)?.redisSha ?? sha);
          return { command: { name: "script", args: [name, first, ...shas] }, step: PLAIN };
        }
        break;
      }
    }
    return { command, step: PLAIN };
  }

  /** Translates the commands of one request. */
  plan(commands: readonly Command[]): ScriptPlan {
    const translated = commands.map((command) => this.translate(command));
    return {
      commands: translated.map((entry) => entry.command),
      steps: translated.map((entry) => entry.step),
    };
  }

  /**
   * Puts the client's SHAs back into the replies of `plan` and counts runs and refusals. `retry` sends
   * one command (on any connection); it is used only when the request is a single EVALSHA.
   */
  async settle(
    plan: ScriptPlan,
    replies: readonly RespReply[],
    retry: ((command: Command) => Promise<RespReply>) | null,
  ): Promise<Settled> {
    let calls = 0;
    let violations = 0;
    const settled: RespReply[] = [];
    for (const [index, original] of replies.entries()) {
      const step = plan.steps[index] ?? PLAIN;
      let reply = original;
      if (step.kind === "load") {
        if (reply.kind === "bulk") reply = { kind: "bulk", bytes: Buffer.from(step.script.clientSha) };
      } else if (step.kind === "run") {
        const lost = reply.kind === "error" && reply.text.startsWith("NOSCRIPT");
        if (lost && step.retry && retry && replies.length === 1) reply = await retry(step.retry);
        if (reply.kind !== "error" || !reply.text.startsWith("NOSCRIPT")) calls += 1;
        if (reply.kind === "error") {
          reply = { kind: "error", text: reply.text.replaceAll(step.script.redisSha, step.script.clientSha) };
        }
        violations += countViolations(reply);
      }
      settled.push(reply);
    }
    return { replies: settled, calls, violations };
  }
}
