#!/usr/bin/env node
/**
 * `npx nimbusq …`: the operator's command line. Reads UPSTASH_REDIS_REST_URL and
 * UPSTASH_REDIS_REST_TOKEN, works on the queues under `--prefix` (or NIMBUSQ_PREFIX, default `bull`),
 * prints a table for people or, with `--json`, one JSON document for scripts.
 *
 * Exit codes: 0 done, 1 the operation failed (Redis unreachable, no such job…), 2 usage (unknown
 * command or flag, bad queue name or value, a missing environment variable).
 */
import { parseArgs } from "node:util";
import {
  createRedis,
  defaultPrefix,
  isShardMap,
  isTcpUrl,
  Queue,
  type ShardMap,
  ValidationError,
} from "../core/index.ts";
import { prefixFromEnv } from "../functions/config/prefix-env.ts";
import { shardMapFromEnv } from "../functions/config/shards-env.ts";
import {
  type CliDatabase,
  type CliRedis,
  type Command,
  type Context,
  type Flags,
  UsageError,
} from "./command.ts";
import { cancel } from "./commands/cancel.ts";
import { clean } from "./commands/clean.ts";
import { groups } from "./commands/groups.ts";
import { job } from "./commands/job.ts";
import { jobs } from "./commands/jobs.ts";
import { metrics } from "./commands/metrics.ts";
import { pause, resume } from "./commands/pause.ts";
import { queues } from "./commands/queues.ts";
import { redrive } from "./commands/redrive.ts";
import { retry } from "./commands/retry.ts";
import { schedulers } from "./commands/schedulers.ts";
import { stderrProgress } from "./progress.ts";

const commands: readonly Command[] = [
  queues,
  jobs,
  job,
  retry,
  cancel,
  redrive,
  pause,
  resume,
  groups,
  clean,
  schedulers,
  metrics,
];

const exitCodes = { ok: 0, failed: 1, usage: 2 } as const;

const globalOptions = {
  json: { type: "boolean" },
  prefix: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type Env = Record<string, string | undefined>;

const footer = `Global options:
  --prefix P  the queues' key prefix (default NIMBUSQ_PREFIX, else "bull")
  --json      print one JSON document instead of a table
  --help, -h  this help

Environment: UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (required), NIMBUSQ_PREFIX.
Exit codes: 0 done, 1 the operation failed, 2 usage error.`;

function overview(): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  const list = commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return `usage: nimbusq <command> [arguments] [options]\n\nCommands:\n${list.join("\n")}\n\n${footer}\nRun "nimbusq <command> --help" for a command's options.`;
}

function commandHelp(command: Command): string {
  return `usage: nimbusq ${command.usage}\n\n${command.summary}.\n\n${command.help}\n\n${footer}`;
}

/**
 * The Redis connection, built on first use so --help and usage errors need no environment: with
 * NIMBUSQ_DATABASES a shard map over the databases it names (each configured by its suffixed
 * variables, functions/config/shards-env.ts), else one database — Redis over TCP when
 * NIMBUSQ_REDIS_URL is set (NIMBUSQ_REDIS_CLUSTER=true for a cluster), else Upstash's REST API.
 */
function connect(env: Env): () => Connection {
  let made: Connection | undefined;
  return () => {
    if (made) return made;
    const shards = shardMapFromEnv(env, single);
    const redis = shards ?? single(env, "");
    const databases: CliDatabase[] = shards
      ? shards.names.map((name) => ({ name, redis: shards.database(name) as CliRedis }))
      : [{ name: "", redis: redis as CliRedis }];
    made = { redis, databases };
    return made;
  };
}

interface Connection {
  redis: CliRedis | ShardMap;
  databases: CliDatabase[];
}

/** One database's client; `suffix` (`_MAIN`) names its variables under NIMBUSQ_DATABASES. */
function single(env: Env, suffix: string): CliRedis {
  const tcpUrl = env.NIMBUSQ_REDIS_URL?.trim();
  if (tcpUrl) {
    if (!isTcpUrl(tcpUrl))
      throw new UsageError(`NIMBUSQ_REDIS_URL${suffix} is not a redis:// or rediss:// URL`);
    return createRedis({ url: tcpUrl, cluster: env.NIMBUSQ_REDIS_CLUSTER?.trim() === "true" });
  }
  for (const name of ["UPSTASH_REDIS_REST_URL", "UPSTASH_REDIS_REST_TOKEN"]) {
    // The CLI runs where people are: secrets come from the shell, not from SSM parameters.
    if (!env[name])
      throw new UsageError(
        `${name}${suffix} is not set: export your Upstash database's REST ${name.endsWith("URL") ? "URL" : "token"} (or NIMBUSQ_REDIS_URL${suffix} for Redis over TCP; the CLI does not read _PARAM variables)`,
      );
  }
  return createRedis({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN });
}

/**
 * An error's message without the request the Redis client quotes (it may carry job data), with the
 * network cause when there is one ("fetch failed" alone says little).
 */
function safeMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return (message.split(", command was:")[0] ?? message) + cause;
}

async function main(argv: string[], env: Env): Promise<number> {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const fail = (code: number, text: string) => {
    process.stderr.write(`nimbusq: ${text}\n`);
    return code;
  };
  let command: Command | undefined;
  try {
    // The command is the first positional once the global options' values are set aside.
    const loose = parseArgs({ args: argv, options: globalOptions, strict: false, allowPositionals: true });
    const name = loose.positionals[0];
    if (name === undefined || name === "help") {
      const topic = commands.find((c) => c.name === loose.positionals[1]);
      if (name === undefined && !loose.values.help)
        return fail(exitCodes.usage, `a command is needed\n\n${overview()}`);
      out(topic ? commandHelp(topic) : overview());
      return exitCodes.ok;
    }
    command = commands.find((c) => c.name === name);
    if (!command) throw new UsageError(`unknown command "${name}" (run "nimbusq --help" for the list)`);
    let parsed: { values: Flags; positionals: string[] };
    try {
      parsed = parseArgs({
        args: argv,
        options: { ...globalOptions, ...command.options },
        strict: true,
        allowPositionals: true,
      });
    } catch (error) {
      throw new UsageError(argumentProblem(error, command.name));
    }
    if (parsed.values.help) {
      out(commandHelp(command));
      return exitCodes.ok;
    }
    const args = parsed.positionals.slice(1);
    const { min, max } = command.positionals;
    if (args.length < min || args.length > max)
      throw new UsageError(`wrong number of arguments\nusage: nimbusq ${command.usage}`);
    const prefix =
      typeof parsed.values.prefix === "string"
        ? parsed.values.prefix
        : (prefixFromEnv(env, "nimbusq") ?? defaultPrefix);
    if (prefix === "") throw new UsageError("--prefix (or NIMBUSQ_PREFIX) must not be empty");
    const connection = connect(env);
    const context: Context = {
      prefix,
      databases: () => connection().databases,
      placedOn: (queueName) => {
        const { redis } = connection();
        return isShardMap(redis) ? redis.databaseOf(queueName) : "";
      },
      queue: (queueName, database) => {
        const { redis } = connection();
        const on = database !== undefined && isShardMap(redis) ? redis.database(database) : redis;
        return new Queue(queueName, { redis: on, prefix });
      },
      progress: stderrProgress(),
    };
    const output = await command.run(context, args, parsed.values);
    out(parsed.values.json ? JSON.stringify(output.json, null, 2) : output.text);
    return exitCodes.ok;
  } catch (error) {
    const hint = command ? ` (run "nimbusq ${command.name} --help")` : "";
    if (error instanceof UsageError) return fail(exitCodes.usage, `${error.message}${hint}`);
    if (error instanceof ValidationError) return fail(exitCodes.usage, error.message);
    return fail(exitCodes.failed, safeMessage(error));
  }
}

// Exits once stdout and stderr have taken everything written (pipes are asynchronous on some systems)
// rather than when the event loop empties: the HTTP client's idle keep-alive sockets would otherwise
// hold every run open for a while after its answer.
main(process.argv.slice(2), process.env).then((code) => {
  let pending = 2;
  const done = () => {
    pending -= 1;
    if (pending === 0) process.exit(code);
  };
  process.stdout.write("", done);
  process.stderr.write("", done);
});

/** A parse error of node:util's parseArgs, said in the CLI's words (the caller adds the help hint). */
function argumentProblem(error: unknown, command: string): string {
  const { code, message } = error as { code?: string; message?: string };
  const option = /'(-[^' ]*)/.exec(message ?? "")?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) return `unknown option ${option} for "${command}"`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option)
    return `option ${option} needs a value, e.g. ${option} 10`;
  return message ?? "the arguments could not be read";
}
