/**
 * The environment readers of functions/config/: every variable a function reads is read there, once,
 * and a bad value is a ValidationError that names the variable. The prefix reader is the one every
 * consumer of NIMBUSQ_PREFIX goes through.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../core/index.ts";
import { httpOptionsFromEnv } from "../../functions/config/http-env.ts";
import { logLevelFromEnv, serviceNameFromEnv, traceIdFromEnv } from "../../functions/config/log-env.ts";
import { metricsEveryFromEnv } from "../../functions/config/metrics-env.ts";
import { prefixFromEnv } from "../../functions/config/prefix-env.ts";
import { sweeperOptionsFromEnv } from "../../functions/config/sweeper-env.ts";
import { workerKickFromEnv } from "../../functions/config/workers-env.ts";
import { createHttpApp } from "../../functions/http/app.ts";
import { createLogger } from "../../functions/log.ts";
import { filesEndingWith } from "../support/source-files.ts";

const redisEnv = { UPSTASH_REDIS_REST_URL: "http://127.0.0.1:9", UPSTASH_REDIS_REST_TOKEN: "t" };

/** The error `read` throws, which must be a ValidationError. */
function validationError(read: () => unknown): ValidationError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error("expected a ValidationError, nothing was thrown");
}

const sources = (dir: string): string[] => filesEndingWith(dir, ".ts");

describe("where functions/ reads the environment", () => {
  it("reads process.env only in functions/config/", () => {
    const readers = sources("functions")
      .filter((file) => !file.startsWith("functions/config/"))
      // Doc comments may show a user's own code; only code counts.
      .filter((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .some((line) => /\bprocess\.env\b/.test(line) && !/^\s*(\*|\/\/)/.test(line)),
      );
    expect(readers).toEqual([]);
  });
});

describe("prefixFromEnv", () => {
  it("is undefined (core's default, bull) when unset or blank, and trimmed otherwise", () => {
    expect(prefixFromEnv({})).toBeUndefined();
    expect(prefixFromEnv({ NIMBUSQ_PREFIX: "  " })).toBeUndefined();
    expect(prefixFromEnv({ NIMBUSQ_PREFIX: " {jobs} " })).toBe("{jobs}");
  });

  it("refuses control characters, naming the variable and where it was read", () => {
    const error = validationError(() => prefixFromEnv({ NIMBUSQ_PREFIX: "jo\rbs" }, "workerHandler"));
    expect(error.field).toBe("NIMBUSQ_PREFIX");
    expect(error.message).toBe(
      "workerHandler: NIMBUSQ_PREFIX must be a key prefix without control characters",
    );
  });

  it("is what the HTTP API, the worker kick and the sweeper read, so a bad value stops each at cold start", () => {
    const bad = { ...redisEnv, NIMBUSQ_PREFIX: "a\tb" };
    const workers = "email:app-email-worker";
    const reads: (() => unknown)[] = [
      () => httpOptionsFromEnv({ ...bad, NIMBUSQ_API_TOKENS: "t" }),
      () => workerKickFromEnv({ ...bad, NIMBUSQ_WORKERS: workers }, async () => {}),
      () => sweeperOptionsFromEnv({ ...bad, NIMBUSQ_WORKERS: workers }),
    ];
    for (const read of reads) expect(validationError(read).field).toBe("NIMBUSQ_PREFIX");
    expect(httpOptionsFromEnv({ ...redisEnv, NIMBUSQ_API_TOKENS: "t", NIMBUSQ_PREFIX: " q " }).prefix).toBe(
      "q",
    );
    expect(sweeperOptionsFromEnv({ NIMBUSQ_WORKERS: workers, NIMBUSQ_PREFIX: " q " }).prefix).toBe("q");
  });
});

describe("httpOptionsFromEnv", () => {
  it("names NIMBUSQ_API_TOKENS when no token is set", () => {
    const error = validationError(() => httpOptionsFromEnv({ ...redisEnv, NIMBUSQ_API_TOKENS: " , " }));
    expect(error.field).toBe("NIMBUSQ_API_TOKENS");
  });

  it("lists NIMBUSQ_API_URL as the document's server, and createHttpApp refuses a server without a URL", async () => {
    const env = { ...redisEnv, NIMBUSQ_API_TOKENS: "t", NIMBUSQ_API_URL: " https://jobs.example.org/prod " };
    const options = httpOptionsFromEnv(env);
    expect(options.servers).toEqual([{ url: "https://jobs.example.org/prod" }]);
    const app = createHttpApp(options);
    const document = (await (await app.request("/openapi.json")).json()) as { servers: { url: string }[] };
    expect(document.servers.map((server) => server.url)).toEqual(["https://jobs.example.org/prod"]);
    const bad = validationError(() => createHttpApp({ ...options, servers: [{ url: "jobs.example.org" }] }));
    expect(bad.field).toBe("servers[0].url");
  });
});

describe("the logger's variables", () => {
  it("take the stricter of NIMBUSQ_LOG_LEVEL and Lambda's AWS_LAMBDA_LOG_LEVEL, INFO by default", () => {
    expect(logLevelFromEnv({})).toBe("INFO");
    expect(logLevelFromEnv({ NIMBUSQ_LOG_LEVEL: "debug" })).toBe("DEBUG");
    expect(logLevelFromEnv({ NIMBUSQ_LOG_LEVEL: "debug", AWS_LAMBDA_LOG_LEVEL: "WARN" })).toBe("WARN");
    expect(logLevelFromEnv({ NIMBUSQ_LOG_LEVEL: "fatal" })).toBe("ERROR");
    // Lambda's own variable: a name we do not know is Lambda's to define, not a mistake of ours.
    expect(logLevelFromEnv({ AWS_LAMBDA_LOG_LEVEL: "NEWLEVEL" })).toBe("INFO");
  });

  it("refuse a NIMBUSQ_LOG_LEVEL that names no level", () => {
    const error = validationError(() => logLevelFromEnv({ NIMBUSQ_LOG_LEVEL: "verbose" }));
    expect(error.field).toBe("NIMBUSQ_LOG_LEVEL");
    expect(error.message).toMatch(/one of DEBUG, INFO, WARN, ERROR, SILENT.*got "verbose"/);
  });

  it("give the service name and the invocation's trace id to the log lines", () => {
    expect(serviceNameFromEnv({ POWERTOOLS_SERVICE_NAME: " shop " })).toBe("shop");
    expect(serviceNameFromEnv({ POWERTOOLS_SERVICE_NAME: "" })).toBeUndefined();
    const env: Record<string, string> = { POWERTOOLS_SERVICE_NAME: "shop" };
    const lines: string[] = [];
    const log = createLogger({ env, output: (line) => lines.push(line), clock: () => 0 });
    // Lambda sets _X_AMZN_TRACE_ID anew for each invocation: it is read at each start.
    env._X_AMZN_TRACE_ID = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    log.startInvocation({ functionName: "fn" });
    log.info("hello");
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      service: "shop",
      xray_trace_id: "1-5759e988-bd862e3fe1be46a994272793",
    });
    expect(traceIdFromEnv({})).toBeUndefined();
  });
});

describe("metricsEveryFromEnv", () => {
  it("is 5 by default, a whole number otherwise, and names NIMBUSQ_METRICS_EVERY when it is not", () => {
    expect(metricsEveryFromEnv({})).toBe(5);
    expect(metricsEveryFromEnv({ NIMBUSQ_METRICS_EVERY: " 0 " })).toBe(0);
    expect(validationError(() => metricsEveryFromEnv({ NIMBUSQ_METRICS_EVERY: "1.5" })).field).toBe(
      "NIMBUSQ_METRICS_EVERY",
    );
  });
});

describe("NIMBUSQ_TICK_MS, the sweeper's tick for every function", () => {
  const sweeperEnv = { NIMBUSQ_WORKERS: "mail:mail-worker" };
  it("sets the sweeper's tickMs and the HTTP API's wake window", () => {
    expect(sweeperOptionsFromEnv({ ...sweeperEnv, NIMBUSQ_TICK_MS: "30000" }).tickMs).toBe(30_000);
    const http = httpOptionsFromEnv({ ...redisEnv, NIMBUSQ_API_TOKENS: "t", NIMBUSQ_TICK_MS: "30000" });
    expect(http.wakeWithinMs).toBe(30_000);
    expect(httpOptionsFromEnv({ ...redisEnv, NIMBUSQ_API_TOKENS: "t" }).wakeWithinMs).toBeUndefined();
  });

  it("refuses a value that is no whole number of at least 1000 ms, or a second way to set it", () => {
    for (const bad of ["1m", "500", "-1", "60000.5"]) {
      expect(
        validationError(() => sweeperOptionsFromEnv({ ...sweeperEnv, NIMBUSQ_TICK_MS: bad })).field,
      ).toBe("NIMBUSQ_TICK_MS");
    }
    const both = { ...sweeperEnv, NIMBUSQ_TICK_MS: "30000", NIMBUSQ_SWEEPER_CONFIG: '{"tickMs":20000}' };
    expect(validationError(() => sweeperOptionsFromEnv(both)).field).toBe("NIMBUSQ_TICK_MS");
  });
});
