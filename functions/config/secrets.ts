/**
 * Secrets from the environment. A deployed function's configuration holds no secret, only where to
 * find it: `<NAME>_PARAM` names an SSM Parameter Store parameter (a SecureString, by name or ARN),
 * read with decryption at the first use and kept for the container's life. A plain `<NAME>` is still
 * accepted and wins (local runs, tests). Secrets Manager secrets are reachable the same way, through
 * the parameter name `/aws/reference/secretsmanager/<secret id>`.
 */
import type { SSMClient, SSMClientConfig } from "@aws-sdk/client-ssm";
import { ValidationError } from "../../core/index.ts";

// The exported types name no AWS SDK type: the SDK is an optional peer of the package (the Lambda
// runtime ships it), and a .d.ts that imported it would not compile where it is absent.

/** An SSM client: the SDK's `SSMClient` (nimbusq only calls its `send`). */
export interface SsmClientLike {
  send(command: never): Promise<unknown>;
}

export interface SecretOptions {
  /** A ready client (tests point one at a local stand-in); created from the environment otherwise. */
  client?: SsmClientLike;
  /** Settings for the client nimbusq creates otherwise (`SSMClientConfig`, e.g. `{ endpoint }`). */
  clientConfig?: Record<string, unknown>;
}

type Env = Record<string, string | undefined>;

/** The suffix of the variable that names a secret's parameter: `UPSTASH_REDIS_REST_TOKEN_PARAM`. */
export const parameterSuffix = "_PARAM";

// A parameter name (`/nimbusq/prod/upstash-token`, `token`) or its ARN. Checked before any call so a
// misplaced secret value (e.g. a `{{resolve:…}}` reference resolved at deploy) is never sent to SSM
// or quoted in an error.
const parameterPattern = /^(arn:aws[\w-]*:ssm:[\w-]+:\d{12}:parameter\/)?[\w.\-/]{1,2048}$/;

/** Reads in flight or done, by parameter name or ARN; a failed read is forgotten so the next use retries. */
const cache = new Map<string, Promise<string>>();
let sharedClient: SSMClient | undefined;

/**
 * The secret `name`: `env[name]` when set, else the value of the parameter `env[name + "_PARAM"]`
 * (read once per container), else undefined.
 *
 * @example
 * const token = await secretFromEnv("UPSTASH_REDIS_REST_TOKEN"); // UPSTASH_REDIS_REST_TOKEN_PARAM=/nimbusq/prod/upstash-token
 */
export async function secretFromEnv(
  name: string,
  env: Env = process.env,
  options: SecretOptions = {},
): Promise<string | undefined> {
  const plain = env[name];
  if (plain !== undefined && plain !== "") return plain;
  const parameter = env[name + parameterSuffix]?.trim();
  if (parameter === undefined || parameter === "") return undefined;
  if (!parameterPattern.test(parameter)) {
    throw new ValidationError(
      name + parameterSuffix,
      "the name or ARN of an SSM parameter (letters, digits, _ . - /), not a value",
      "the environment",
    );
  }
  let read = cache.get(parameter);
  if (!read) {
    const started = readParameter(name, parameter, options);
    cache.set(parameter, started);
    started.catch(() => {
      if (cache.get(parameter) === started) cache.delete(parameter);
    });
    read = started;
  }
  return read;
}

/**
 * A copy of `env` with each of `names` resolved by `secretFromEnv` (names without a value or a
 * parameter stay as they are): for configuration readers that take a plain environment.
 *
 * @example
 * const env = await envWithSecrets(process.env, ["UPSTASH_REDIS_REST_TOKEN", "NIMBUSQ_API_TOKENS"]);
 */
export async function envWithSecrets(
  env: Env,
  names: readonly string[],
  options: SecretOptions = {},
): Promise<Env> {
  const resolved: Env = { ...env };
  const values = await Promise.all(names.map((name) => secretFromEnv(name, env, options)));
  names.forEach((name, i) => {
    if (values[i] !== undefined) resolved[name] = values[i];
  });
  return resolved;
}

/** Forgets every cached secret: the next use reads its parameter again (after a rotation, in tests). */
export function forgetSecrets(): void {
  cache.clear();
}

async function readParameter(name: string, parameter: string, options: SecretOptions): Promise<string> {
  const sdk = await import("@aws-sdk/client-ssm");
  let client = options.client as SSMClient | undefined;
  if (!client && options.clientConfig) client = new sdk.SSMClient(options.clientConfig as SSMClientConfig);
  if (!client) {
    sharedClient ??= new sdk.SSMClient({});
    client = sharedClient;
  }
  let value: string | undefined;
  try {
    const answer = await client.send(new sdk.GetParameterCommand({ Name: parameter, WithDecryption: true }));
    value = answer.Parameter?.Value;
  } catch (error) {
    // The SDK's error names the failure (ParameterNotFound, AccessDeniedException…); it never holds the value.
    const code = (error as { name?: string }).name ?? "Error";
    throw new Error(`${name}: reading SSM parameter ${parameter} failed (${code})`, { cause: error });
  }
  if (value === undefined || value === "") {
    throw new Error(`${name}: SSM parameter ${parameter} has no value`);
  }
  return value;
}
