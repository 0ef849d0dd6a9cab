/**
 * Scripts are sent to Redis rewritten (`lua-prelude.ts`): a script flagged `#!lua
 * flags=allow-key-locking` always (Redis 7 rejects the flag), and with `redis62` every script (its
 * calls are checked against Redis 6.2's forms). A rewritten script's SHA-1 in Redis differs from the one
 * the client computed over its own text, so this module keeps the client SHA → rewritten script map and
 * translates EVAL, EVAL_RO, EVALSHA, EVALSHA_RO, SCRIPT LOAD and SCRIPT EXISTS both ways: clients only
 * ever see their own SHAs. With Upstash mode off, unflagged scripts and unknown SHAs pass through
 * untouched. With `redis62` an unknown SHA goes to Redis as one no script can have, so a script that
 * reached Redis some other way (unchecked) answers NOSCRIPT and the client falls back to EVAL.
 *
 * When Redis has lost a rewritten flagged script (restart, SCRIPT FLUSH), a request made of that single
 * EVALSHA is retried as EVAL of the rewritten source. In a longer pipeline or a transaction the other
 * commands have already run, so the NOSCRIPT goes back to the client, which falls back to EVAL as it
 * would on Upstash. An unflagged script is never retried, so it is billed alike with the mode on and off.
 */
import { createHash } from "node:crypto";
import type { Command } from "./command-request.ts";
import { flaggedShebang, type KeyPositions, positionsTable, VIOLATION_MARK } from "./lua-key-check.ts";
import { rewriteScript } from "./lua-prelude.ts";
import { REDIS62_MARK } from "./redis62.ts";
import type { RespReply } from "./resp-client.ts";

interface Rewritten {
  readonly clientSha: string;
  readonly source: string;
  readonly redisSha: string;
  /** Flagged `allow-key-locking`. */
  readonly flagged: boolean;
}

/** What translation did to one command, for fixing its reply. */
type Step =
  | { readonly kind: "plain" }
  /** A rewritten script runs; `retry` is the EVAL to send if Redis answers NOSCRIPT. */
  | { readonly kind: "run"; readonly script: Rewritten; readonly retry: Command | null }
  /** SCRIPT LOAD of a rewritten script: Redis answers the rewritten SHA, the client expects its own. */
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
  /** Unflagged script runs Redis executed (Upstash runs them under its global lock). */
  readonly unflagged: number;
  /** Replies carrying a declared-keys refusal. */
  readonly violations: number;
  /** Replies carrying an Upstash-mode refusal of a 7.0-only form. */
  readonly refusals: number;
}

export interface RewriteOptions {
  /** Key positions for declared-keys mode; null: flags are stripped but keys are not checked. */
  readonly positions: KeyPositions | null;
  /** Rewrite every script to refuse Redis 7.0-only forms (RestServerOptions.redis62). */
  readonly redis62: boolean;
  /** Cluster mode: every script gets a `#!lua` line 1, so Redis refuses one touching two slots. */
  readonly slotShebang?: boolean;
}

const PLAIN: Step = { kind: "plain" };
const RUN_COMMANDS = new Set(["eval", "evalsha", "eval_ro", "evalsha_ro"]);
/** Not hexadecimal, so no loaded script has it: Redis answers NOSCRIPT. */
const UNKNOWN_SHA = "nimbusq-upstash-mode-unknown-script-sha!";

function sha1(text: string): string {
  return createHash("sha1").update(text, "utf8").digest("hex");
}

function countMarks(reply: RespReply, mark: string): number {
  if (reply.kind === "error") return reply.text.includes(mark) ? 1 : 0;
  if (reply.kind !== "array") return 0;
  let total = 0;
  for (const item of reply.items) total += countMarks(item, mark);
  return total;
}

export class ScriptRewrites {
  private readonly scripts = new Map<string, Rewritten>();

  constructor(private readonly options: RewriteOptions) {}

  /** The rewritten form of `source`, or null when it goes to Redis as it is. */
  private rewrite(source: string): Rewritten | null {
    const shebang = flaggedShebang(source);
    if (!shebang && !this.options.redis62 && !this.options.slotShebang) return null;
    const clientSha = sha1(source);
    let script = this.scripts.get(clientSha);
    if (!script) {
      const { positions, redis62, slotShebang } = this.options;
      const keyPositions = shebang && positions ? positionsTable(source, positions) : null;
      const rewritten = rewriteScript(source, shebang, { keyPositions, redis62, slotShebang });
      script = { clientSha, source: rewritten, redisSha: sha1(rewritten), flagged: shebang !== null };
      this.scripts.set(clientSha, script);
    }
    return script;
  }

  private known(sha: string | undefined): Rewritten | undefined {
    return sha === undefined ? undefined : this.scripts.get(sha.toLowerCase());
  }

  /** The SHA to send Redis for a client's SHA. */
  private redisSha(sha: string): string {
    return this.known(sha)?.redisSha ?? (this.options.redis62 ? UNKNOWN_SHA : sha);
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
        const args = [name, this.redisSha(first), ...rest];
        if (!script) return { command: { name: command.name, args }, step: PLAIN };
        const evalName = command.name === "evalsha" ? "eval" : "eval_ro";
        const retry = script.flagged
          ? { name: evalName, args: [evalName.toUpperCase(), script.source, ...rest] }
          : null;
        return { command: { name: command.name, args }, step: { kind: "run", script, retry } };
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
          const shas = rest.map((sha) => this.redisSha(sha));
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
    let unflagged = 0;
    let violations = 0;
    let refusals = 0;
    const settled: RespReply[] = [];
    for (const [index, original] of replies.entries()) {
      const step = plan.steps[index] ?? PLAIN;
      let reply = original;
      const noScript = original.kind === "error" && original.text.startsWith("NOSCRIPT");
      if (step.kind === "plain" && RUN_COMMANDS.has(plan.commands[index]?.name ?? "") && !noScript)
        unflagged += 1;
      if (step.kind === "load") {
        if (reply.kind === "bulk") reply = { kind: "bulk", bytes: Buffer.from(step.script.clientSha) };
      } else if (step.kind === "run") {
        const lost = reply.kind === "error" && reply.text.startsWith("NOSCRIPT");
        if (lost && step.retry && retry && replies.length === 1) reply = await retry(step.retry);
        const ran = reply.kind !== "error" || !reply.text.startsWith("NOSCRIPT");
        if (ran && step.script.flagged) calls += 1;
        if (ran && !step.script.flagged) unflagged += 1;
        if (reply.kind === "error") {
          reply = { kind: "error", text: reply.text.replaceAll(step.script.redisSha, step.script.clientSha) };
        }
        if (step.script.flagged) violations += countMarks(reply, VIOLATION_MARK);
        refusals += countMarks(reply, REDIS62_MARK);
      }
      settled.push(reply);
    }
    return { replies: settled, calls, unflagged, violations, refusals };
  }
}
