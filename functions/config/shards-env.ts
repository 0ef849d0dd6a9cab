/**
 * Several databases from the environment (issue 27's shard map): `NIMBUSQ_DATABASES` names them,
 * comma-separated (`main,second`: lowercase letters, digits, `_`), and each database's connection
 * takes the usual variables with `_<NAME>` appended — `UPSTASH_REDIS_REST_URL_MAIN` with
 * `UPSTASH_REDIS_REST_TOKEN_MAIN` (or `UPSTASH_REDIS_REST_TOKEN_MAIN_PARAM`), or
 * `NIMBUSQ_REDIS_URL_MAIN` (or `_MAIN_PARAM`) and `NIMBUSQ_REDIS_CLUSTER_MAIN` over TCP.
 * `NIMBUSQ_QUEUE_DATABASES` pins queues (`email:main,report:second`); every other queue goes where the
 * stable hash of its name puts it (core/redis/shard-map.ts). Every function of a deployment must see
 * the same three settings, or they would look for a queue on different databases.
 */
import { type RedisPort, ShardMap, type UpstashRedisLike, ValidationError } from "../../core/index.ts";
import { databaseName, queueNameProblem } from "../../core/internal.ts";
import { parameterSuffix } from "./secrets.ts";

type Env = Record<string, string | undefined>;

const databasesVariable = "NIMBUSQ_DATABASES";
const queueDatabasesVariable = "NIMBUSQ_QUEUE_DATABASES";

/** The variables a single database is configured by (each also with `_PARAM` for a secret's parameter). */
const connectionVariables = [
  "UPSTASH_REDIS_REST_URL",
  "UPSTASH_REDIS_REST_TOKEN",
  "NIMBUSQ_REDIS_URL",
  "NIMBUSQ_REDIS_CLUSTER",
];

const where = "databases from the environment";

/** The environment as one database sees it: its suffixed variables under the plain names. */
function databaseEnv(env: Env, name: string): Env {
  const suffix = `_${name.toUpperCase()}`;
  const view: Env = { ...env };
  for (const variable of connectionVariables) {
    view[variable] = env[variable + suffix];
    view[variable + parameterSuffix] = env[variable + suffix + parameterSuffix];
  }
  const has = (variable: string) => Boolean(view[variable] || view[variable + parameterSuffix]);
  if (!has("NIMBUSQ_REDIS_URL") && !(view.UPSTASH_REDIS_REST_URL && has("UPSTASH_REDIS_REST_TOKEN")))
    throw new ValidationError(
      `${databasesVariable} (${name})`,
      `configured by UPSTASH_REDIS_REST_URL${suffix} and UPSTASH_REDIS_REST_TOKEN${suffix}[_PARAM], or NIMBUSQ_REDIS_URL${suffix}[_PARAM]`,
      where,
    );
  return view;
}

/** `email:main,report:second` → `{ email: "main", report: "second" }`. */
function pinsFromEnv(env: Env, names: string[]): Record<string, string> {
  const text = env[queueDatabasesVariable]?.trim() ?? "";
  const pins: Record<string, string> = {};
  if (text === "") return pins;
  for (const [index, raw] of text.split(",").entries()) {
    const parts = raw.split(":").map((part) => part.trim());
    if (parts.length !== 2 || !parts[0] || !parts[1])
      throw new ValidationError(`${queueDatabasesVariable}[${index}]`, "queue:database", where);
    const [queue, database] = parts as [string, string];
    const field = `${queueDatabasesVariable}[${index}]`;
    const problem = queueNameProblem(queue);
    if (problem) throw new ValidationError(`${field}.queue`, problem, where);
    if (!names.includes(database))
      throw new ValidationError(
        `${field}.database`,
        `one of ${databasesVariable} (${names.join(", ")})`,
        where,
      );
    if (queue in pins) throw new ValidationError(field, "a queue not named before", where);
    pins[queue] = database;
  }
  return pins;
}

/**
 * The shard map `NIMBUSQ_DATABASES` describes, each database's client made by `single` from its own
 * view of the environment; undefined when the variable is unset or blank (one database, as before).
 */
export function shardMapFromEnv(
  env: Env,
  single: (view: Env, suffix: string) => UpstashRedisLike | RedisPort,
): ShardMap | undefined {
  const text = env[databasesVariable]?.trim() ?? "";
  if (text === "") {
    if (env[queueDatabasesVariable]?.trim())
      throw new ValidationError(queueDatabasesVariable, `set only with ${databasesVariable}`, where);
    return undefined;
  }
  const names = text.split(",").map((name) => name.trim());
  const databases: Record<string, UpstashRedisLike | RedisPort> = {};
  for (const [index, name] of names.entries()) {
    // `_param` would make its variables read as another database's secret parameters.
    if (!databaseName.test(name) || name.endsWith("_param"))
      throw new ValidationError(
        `${databasesVariable}[${index}]`,
        "a name of lowercase letters, digits and _ (not ending in _param)",
        where,
      );
    if (name in databases)
      throw new ValidationError(`${databasesVariable}[${index}]`, "a database not named before", where);
    databases[name] = single(databaseEnv(env, name), `_${name.toUpperCase()}`);
  }
  return new ShardMap({ databases, queues: pinsFromEnv(env, names) });
}
