/**
 * Secrets read at run time: `<NAME>_PARAM` names an SSM parameter that the real SSM client reads
 * (from a local stand-in) once per container; a plain `<NAME>` still wins. The Redis client built
 * from such an environment runs real commands through the local REST server.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { toRedisPort, type UpstashRedisLike, ValidationError } from "../../core/index.ts";
import { redisOrEnv } from "../../functions/config/redis-env.ts";
import { envWithSecrets, forgetSecrets, secretFromEnv } from "../../functions/config/secrets.ts";
import { type SsmRecorder, startSsmRecorder } from "../support/ssm-recorder.ts";

let ssm: SsmRecorder;

beforeAll(async () => {
  ssm = await startSsmRecorder();
});

afterAll(() => ssm?.close());

beforeEach(() => {
  forgetSecrets();
  ssm.parameters.clear();
  ssm.requests.length = 0;
});

const name = "UPSTASH_REDIS_REST_TOKEN";
const parameter = "/nimbusq/test/upstash-token";

describe("secretFromEnv", () => {
  it("reads the named parameter with decryption, once per container", async () => {
    ssm.parameters.set(parameter, "token-from-ssm");
    const env = { [`${name}_PARAM`]: parameter };
    const options = { client: ssm.client() };
    const first = await Promise.all([secretFromEnv(name, env, options), secretFromEnv(name, env, options)]);
    expect(first).toEqual(["token-from-ssm", "token-from-ssm"]);
    expect(await secretFromEnv(name, env, options)).toBe("token-from-ssm");
    expect(ssm.requests).toEqual([{ Name: parameter, WithDecryption: true }]);

    // A rotation reaches a container once it forgets (or a new container starts).
    ssm.parameters.set(parameter, "rotated");
    expect(await secretFromEnv(name, env, options)).toBe("token-from-ssm");
    forgetSecrets();
    expect(await secretFromEnv(name, env, options)).toBe("rotated");
    expect(ssm.requests).toHaveLength(2);
  });

  it("takes a parameter's ARN as well as its name", async () => {
    const arn = `arn:aws:ssm:us-east-1:123456789012:parameter${parameter}`;
    ssm.parameters.set(arn, "by-arn");
    expect(await secretFromEnv(name, { [`${name}_PARAM`]: arn }, { client: ssm.client() })).toBe("by-arn");
  });

  it("prefers a plain value (local runs) and asks SSM nothing", async () => {
    const env = { [name]: "plain", [`${name}_PARAM`]: parameter };
    expect(await secretFromEnv(name, env, { client: ssm.client() })).toBe("plain");
    expect(await secretFromEnv(name, {}, { client: ssm.client() })).toBeUndefined();
    expect(ssm.requests).toEqual([]);
  });

  it("names the variable, the parameter and SSM's error code when the read fails, and retries next time", async () => {
    const env = { [`${name}_PARAM`]: parameter };
    const options = { client: ssm.client() };
    const failure = await secretFromEnv(name, env, options).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe(
      `${name}: reading SSM parameter ${parameter} failed (ParameterNotFound)`,
    );
    ssm.parameters.set(parameter, "created-later");
    expect(await secretFromEnv(name, env, options)).toBe("created-later");
    expect(ssm.requests).toHaveLength(2);
  });

  it("refuses a value where a parameter name belongs, without sending or quoting it", async () => {
    for (const misplaced of ["AXhpc2-is+a/secret=", "{{resolve:ssm-secure:/nimbusq/token}}", "two words"]) {
      const failure = await secretFromEnv(
        name,
        { [`${name}_PARAM`]: misplaced },
        { client: ssm.client() },
      ).catch((error: Error) => error);
      expect(failure, misplaced).toBeInstanceOf(ValidationError);
      expect((failure as ValidationError).field).toBe(`${name}_PARAM`);
      expect((failure as Error).message).not.toContain(misplaced);
    }
    expect(ssm.requests).toEqual([]);
  });

  it("refuses an empty parameter", async () => {
    ssm.parameters.set(parameter, "");
    const failure = await secretFromEnv(
      name,
      { [`${name}_PARAM`]: parameter },
      { client: ssm.client() },
    ).catch((error: Error) => error);
    expect((failure as Error).message).toBe(`${name}: SSM parameter ${parameter} has no value`);
  });
});

describe("envWithSecrets", () => {
  it("resolves the names given and leaves the rest of the environment as it is", async () => {
    ssm.parameters.set("/nimbusq/test/api-tokens", "admin:a,b");
    const env = {
      NIMBUSQ_API_TOKENS_PARAM: "/nimbusq/test/api-tokens",
      [name]: "plain",
      NIMBUSQ_QUEUES: "email",
    };
    const resolved = await envWithSecrets(env, ["NIMBUSQ_API_TOKENS", name, "NIMBUSQ_ADMIN_TOKENS"], {
      client: ssm.client(),
    });
    expect(resolved).toEqual({ ...env, NIMBUSQ_API_TOKENS: "admin:a,b" });
    expect(resolved).not.toHaveProperty("NIMBUSQ_ADMIN_TOKENS");
    expect(env).not.toHaveProperty("NIMBUSQ_API_TOKENS");
  });
});

describe("redisOrEnv", () => {
  it("builds the client with the token from SSM before its first command, once", async () => {
    ssm.parameters.set(parameter, inject("restToken"));
    const env = { UPSTASH_REDIS_REST_URL: inject("restUrl"), [`${name}_PARAM`]: parameter };
    const port = toRedisPort(redisOrEnv(undefined, env, { client: ssm.client() }) as UpstashRedisLike);
    expect(ssm.requests).toEqual([]);
    const answers = await Promise.all([
      port.eval("return ARGV[1]", [], ["first"]),
      port.hgetall("nimbusq-secrets-test:absent"),
    ]);
    expect(answers).toEqual(["first", []]);
    expect(await port.eval("return ARGV[1]", [], ["second"])).toBe("second");
    expect(ssm.requests).toHaveLength(1);
  });

  it("fails each command with the read's error until the parameter can be read", async () => {
    const env = { UPSTASH_REDIS_REST_URL: inject("restUrl"), [`${name}_PARAM`]: parameter };
    const port = toRedisPort(redisOrEnv(undefined, env, { client: ssm.client() }) as UpstashRedisLike);
    await expect(port.eval("return 1", [], [])).rejects.toThrow(/ParameterNotFound/);
    ssm.parameters.set(parameter, inject("restToken"));
    expect(await port.eval("return 1", [], [])).toBe(1);
  });
});
