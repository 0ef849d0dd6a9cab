/**
 * `npm run build` + `osls package`, offline and without AWS credentials, in a temporary copy of the
 * service: the CloudFormation template osls writes says what would be deployed, and each bundle is
 * loaded in a fresh `node` process where the AWS SDK cannot be resolved.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createRedis, Queue } from "../../core/index.ts";
import { addJobs } from "../../core/redis/generated/scripts.ts";
import { demoQueues } from "../../examples/demo/demo-queues.ts";
import { sweeperOptionsFromEnv } from "../../functions/config/sweeper-env.ts";
import { workersFromEnv } from "../../functions/config/workers-env.ts";
import { createHttpApp, openApiDocument } from "../../functions/http/index.ts";
import { functionEntries } from "../../infra/build/functions.ts";
import { apiGatewayV2Event, functionUrlEvent, sqsEvent } from "../support/aws-events.ts";
import { sharedRedis, startPrivateStack, uniquePrefix } from "../support/stack.ts";
import { importInFreshNode } from "./fresh-node.ts";
import {
  type CloudFormationTemplate,
  type PackageOutput,
  packageService,
  type ServiceCopy,
  serviceCopy,
} from "./service.ts";

const stage = "ci";
const service = "nimbusq";
const names = functionEntries.map((fn) => fn.name);
const workerNames = ["email-worker", "report-worker"];

let copy: ServiceCopy;
let packaged: PackageOutput;
let template: CloudFormationTemplate;

beforeAll(async () => {
  copy = await serviceCopy();
  packaged = await packageService(copy, stage, names);
  template = packaged.template;
}, 60_000);

afterAll(() => copy?.remove());

type Resource = CloudFormationTemplate["Resources"][string];

function resourcesOfType(type: string): [string, Resource][] {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

type Props = Record<string, unknown>;

function props(resource: Resource | undefined): Props {
  return resource?.Properties ?? {};
}

/** The value at a path of keys and indices into template JSON; undefined where the path ends. */
function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

const number = (value: unknown) => value as number;

/** The logical id and resource of a function, by its serverless.yml name. */
function lambda(name: string): [string, Props] {
  const found = resourcesOfType("AWS::Lambda::Function").find(
    ([, r]) => props(r).FunctionName === `${service}-${stage}-${name}`,
  );
  if (!found) throw new Error(`no function ${name} in the template`);
  return [found[0], props(found[1])];
}

function singleOfType(type: string, where: (p: Props) => boolean): Props {
  const matches = resourcesOfType(type).filter(([, r]) => where(props(r)));
  expect(matches, type).toHaveLength(1);
  return props(matches[0]?.[1]);
}

function invokeConfigOf(name: string): Props {
  const [id] = lambda(name);
  return singleOfType("AWS::Lambda::EventInvokeConfig", (p) => at(p, "FunctionName", "Ref") === id);
}

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

function statements(): Statement[] {
  return resourcesOfType("AWS::IAM::Role").flatMap(([, role]) =>
    ((props(role).Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]).flatMap(
      // Conditional statements (X-Ray writes while tracing is on) are template-ops.test.ts's.
      (policy) => policy.PolicyDocument.Statement.filter((s) => "Action" in s),
    ),
  );
}

const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const resourcesOf = (s: Statement) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]);

/** A function's environment as Lambda would see it, with `Ref`s to named resources resolved. */
function environmentOf(name: string): Record<string, string> {
  const variables = at(lambda(name)[1], "Environment", "Variables") ?? {};
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(variables as Record<string, unknown>)) {
    if (typeof value === "string") env[key] = value;
    else {
      const ref = (value as { Ref?: string }).Ref as string;
      env[key] = (props(template.Resources[ref]).Name as string | undefined) ?? ref;
    }
  }
  return env;
}

describe("osls package (offline, no AWS credentials)", () => {
  it("packages every function from its bundle alone, for nodejs22.x on arm64", () => {
    const timeouts: Record<string, number> = {
      http: 30,
      sweeper: 60,
      "email-worker": 300,
      "report-worker": 300,
      "sqs-email-producer": 30,
    };
    expect(resourcesOfType("AWS::Lambda::Function")).toHaveLength(names.length);
    for (const name of names) {
      const [, fn] = lambda(name);
      expect(fn.Runtime, name).toBe("nodejs22.x");
      expect(fn.Architectures, name).toEqual(["arm64"]);
      expect(fn.Handler, name).toBe(`build/lambda/${name}/index.handler`);
      expect(fn.Timeout, name).toBe(timeouts[name]);
      // ioredis beside the bundle, for Redis over TCP (loaded at the first TCP command only).
      expect(packaged.zips[name], name).toEqual([
        `build/lambda/${name}/index.mjs`,
        `build/lambda/${name}/index.mjs.map`,
        `build/lambda/${name}/node_modules/ioredis/index.cjs`,
        `build/lambda/${name}/node_modules/ioredis/package.json`,
      ]);
    }
  });

  it("ticks the sweeper every minute, one at a time, and drops ticks it cannot take at once", () => {
    const [sweeperId, sweeper] = lambda("sweeper");
    const rule = singleOfType("AWS::Events::Rule", (p) =>
      ((p.Targets ?? []) as unknown[]).some((t) => at(t, "Arn", "Fn::GetAtt", 0) === sweeperId),
    );
    expect(rule.ScheduleExpression).toBe("rate(1 minute)");
    expect(rule.State).toBe("ENABLED");
    expect(sweeper.ReservedConcurrentExecutions).toBe(1);
    expect(invokeConfigOf("sweeper")).toMatchObject({
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 60,
    });
  });

  it("does not retry worker invocations (they are hints; Redis leases are the truth)", () => {
    for (const name of workerNames) {
      expect(invokeConfigOf(name).MaximumRetryAttempts, name).toBe(0);
      expect(invokeConfigOf(name).MaximumEventAgeInSeconds, name).toBeGreaterThanOrEqual(60);
    }
  });

  it("serves the HTTP API from a function URL and from an HTTP API route per route of the app", () => {
    const [httpId] = lambda("http");
    const url = singleOfType(
      "AWS::Lambda::Url",
      (p) => at(p, "TargetFunctionArn", "Fn::GetAtt", 0) === httpId,
    );
    expect(url.AuthType).toBe("NONE");
    singleOfType(
      "AWS::Lambda::Permission",
      (p) => p.Action === "lambda:InvokeFunctionUrl" && p.FunctionUrlAuthType === "NONE",
    );

    // The app's own routing table is the truth; 405 handlers (ALL) and middleware (*) are no routes.
    const app = createHttpApp({
      redis: createRedis({ url: "http://127.0.0.1:9", token: "t" }),
      tokens: ["t"],
    });
    const served = [
      ...new Set(
        app.routes
          .filter((route) => route.method !== "ALL" && route.path !== "*" && route.path !== "/*")
          .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`),
      ),
    ];
    const routes = resourcesOfType("AWS::ApiGatewayV2::Route").map(([, r]) => props(r).RouteKey as string);
    expect(routes.sort()).toEqual(served.sort());
    expect(routes).toEqual(
      expect.arrayContaining([
        "POST /queues/{queue}/jobs",
        "GET /queues/{queue}/jobs/{id}",
        "GET /queues/{queue}",
        "GET /queues/{queue}/jobs",
        "GET /openapi.json",
      ]),
    );
    const integration = singleOfType("AWS::ApiGatewayV2::Integration", () => true);
    expect(integration.PayloadFormatVersion).toBe("2.0");
  });

  it("feeds the SQS producer with partial batch responses, a dead-letter queue and a long enough visibility", () => {
    const [producerId, producer] = lambda("sqs-email-producer");
    const mapping = singleOfType(
      "AWS::Lambda::EventSourceMapping",
      (p) => at(p, "FunctionName", "Fn::GetAtt", 0) === producerId,
    );
    expect(mapping.FunctionResponseTypes).toEqual(["ReportBatchItemFailures"]);
    expect(mapping.BatchSize).toBeGreaterThan(0);
    const queueId = at(mapping, "EventSourceArn", "Fn::GetAtt", 0) as string;
    const queue = template.Resources[queueId] as Resource;
    expect(queue.Type).toBe("AWS::SQS::Queue");
    const window = number(mapping.MaximumBatchingWindowInSeconds ?? 0);
    expect(props(queue).VisibilityTimeout).toBeGreaterThanOrEqual(6 * number(producer.Timeout) + window);
    expect(at(queue, "Properties", "RedrivePolicy", "maxReceiveCount")).toBeGreaterThanOrEqual(1);
    const deadLetterId = at(queue, "Properties", "RedrivePolicy", "deadLetterTargetArn", "Fn::GetAtt", 0);
    const deadLetter = template.Resources[deadLetterId as string] as Resource;
    expect(deadLetter.Type).toBe("AWS::SQS::Queue");
    expect(deadLetter).not.toBe(queue);
  });

  // template-ops.test.ts checks each function's own role in full.
  it("lets the functions invoke the two workers and put events on the stack's bus, nothing more", () => {
    const all = statements();
    const invoking = all.filter((s) => actionsOf(s).some((a) => a.startsWith("lambda:")));
    const putting = all.filter((s) => actionsOf(s).some((a) => a.startsWith("events:")));
    expect([...new Set(invoking.flatMap(actionsOf))]).toEqual(["lambda:InvokeFunction"]);
    expect(putting.flatMap(actionsOf)).toEqual(["events:PutEvents"]);
    const workerArns = workerNames.map((name) => ({
      "Fn::Sub": `arn:\${AWS::Partition}:lambda:\${AWS::Region}:\${AWS::AccountId}:function:${lambda(name)[1].FunctionName as string}`,
    }));
    const invoked = invoking.flatMap(resourcesOf).map((arn) => JSON.stringify(arn));
    expect([...new Set(invoked)].sort()).toEqual(workerArns.map((arn) => JSON.stringify(arn)).sort());
    const [busId] = resourcesOfType("AWS::Events::EventBus")[0] ?? [];
    expect(putting.flatMap(resourcesOf)).toEqual([{ "Fn::GetAtt": [busId, "Arn"] }]);
    for (const s of all) {
      expect(actionsOf(s).filter((a) => a === "*" || a.endsWith(":*"))).toEqual([]);
      if (actionsOf(s).some((a) => a.startsWith("lambda:") || a.startsWith("events:"))) {
        expect(JSON.stringify(s.Resource)).not.toMatch(/"\*"|function:\*|:\*"/);
      }
    }
  });

  it("configures every function through its environment, consistently with the demo queues", () => {
    for (const name of names) {
      expect(environmentOf(name), name).toMatchObject({
        UPSTASH_REDIS_REST_URL: expect.stringMatching(/^https:\/\//),
        // A parameter name: the token itself is read from SSM at run time.
        UPSTASH_REDIS_REST_TOKEN_PARAM: expect.stringMatching(/^\//),
      });
    }
    const sweeperEnv = environmentOf("sweeper");
    expect(sweeperEnv.NIMBUSQ_EVENT_BUS).toBe(`${service}-${stage}`);
    expect(sweeperEnv.NIMBUSQ_SWEEPER_MODE).toBe("loop");
    const options = sweeperOptionsFromEnv(sweeperEnv);
    expect(options.queues).toEqual(
      demoQueues.map((q) => ({
        name: q.name,
        workerFunction: `${service}-${stage}-${q.name}-worker`,
        batchSize: q.batchSize,
        maxWorkers: q.maxWorkers,
      })),
    );
    const httpEnv = environmentOf("http");
    expect(httpEnv.NIMBUSQ_QUEUES?.split(",")).toEqual(demoQueues.map((q) => q.name));
    expect(httpEnv.NIMBUSQ_API_TOKENS_PARAM).toMatch(/^\//);
    expect(workersFromEnv(httpEnv)).toEqual(options.queues);
  });
});

/** POSTs one job to the HTTP bundle in a fresh node process, as a function URL would. */
function postJob(http: string, env: Record<string, string>, token: string) {
  return importInFreshNode<{ statusCode: number; body: string }>(http, {
    cwd: copy.dir,
    env,
    event: functionUrlEvent({
      method: "POST",
      path: "/queues/email/jobs",
      headers: { authorization: `Bearer ${token}` },
      body: { name: "send", data: {} },
    }),
  });
}

describe("the bundles", () => {
  // Plain values win over the `…_PARAM` names, so nothing here needs SSM (or the SDK).
  const dummyRedis = {
    UPSTASH_REDIS_REST_URL: "http://127.0.0.1:9",
    UPSTASH_REDIS_REST_TOKEN: "dummy",
    NIMBUSQ_API_TOKENS: "dummy",
  };

  it("leave the AWS SDK to the Lambda runtime", () => {
    for (const bundle of copy.bundles) {
      expect(
        bundle.inputs.filter((input) => /node_modules\/(@aws-sdk|@smithy)\//.test(input)),
        bundle.name,
      ).toEqual([]);
      for (const imported of bundle.externalImports) {
        expect(imported, bundle.name).toMatch(/^(node:|@aws-sdk\/client-(lambda|eventbridge|ssm)$)/);
      }
      const text = readFileSync(bundle.file, "utf8");
      // The SDK's request signer and its smithy runtime would be unmistakable.
      expect(text).not.toContain("AWS4-HMAC-SHA256");
      expect(text).not.toMatch(/smithy/i);
      // The only mentions: the lazy imports of the clients.
      expect(text.replace(/import\("@aws-sdk\/client-(lambda|eventbridge|ssm)"\)/g, "")).not.toContain(
        "@aws-sdk",
      );
    }
  });

  it("carry their scripts' sources packed and none of the document's text", () => {
    for (const bundle of copy.bundles) {
      const text = readFileSync(bundle.file, "utf8");
      expect(bundle.scripts.length, bundle.name).toBeGreaterThan(0);
      expect(text, bundle.name).not.toContain("redis.call(");
    }
    const http = copy.bundles.find((b) => b.name === "http");
    expect(http?.scripts).toEqual(
      expect.arrayContaining(["addJobs", "handOffJob", "handOffJobDeclared", "cancelJob"]),
    );
    expect(http?.scripts).not.toContain("ackAndLease");
    const text = readFileSync(http?.file as string, "utf8");
    // Route summaries and schema descriptions live in the prebuilt /openapi.json only.
    expect(text).not.toContain("Add one job, or an array");
    expect(text).not.toContain("Keep at most this many jobs");
  });

  it("load in a fresh node process where the AWS SDK cannot be resolved (import times are reported)", async () => {
    const rows: string[] = [];
    for (const bundle of copy.bundles) {
      const env = { ...environmentOf(bundle.name), ...dummyRedis };
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const loaded = await importInFreshNode(bundle.file, { cwd: copy.dir, env });
        expect(loaded.handlerType, bundle.name).toBe("function");
        expect(loaded.sdkResolvable, bundle.name).toBe(false);
        times.push(loaded.importMs);
      }
      times.sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)] as number;
      rows.push(
        `${bundle.name.padEnd(20)} ${(bundle.bytes / 1024).toFixed(1).padStart(7)} KB  gzip ${(bundle.gzipBytes / 1024).toFixed(1).padStart(6)} KB  import median ${median.toFixed(1).padStart(6)} ms (min ${times[0]?.toFixed(1)}, max ${times.at(-1)?.toFixed(1)})`,
      );
    }
    console.log(`bundle import times (fresh node ${process.version}, 5 runs each):\n${rows.join("\n")}`);
  }, 60_000);

  it("serve requests: the HTTP bundle over the local REST server, through both event shapes", async () => {
    const http = copy.bundles.find((b) => b.name === "http")?.file as string;
    const env: Record<string, string> = {
      ...environmentOf("http"),
      UPSTASH_REDIS_REST_URL: inject("restUrl"),
      UPSTASH_REDIS_REST_TOKEN: inject("restToken"),
      NIMBUSQ_PREFIX: uniquePrefix("pkg"),
      NIMBUSQ_WORKERS: "",
      NIMBUSQ_API_TOKENS: "admin:pkg-test-token",
    };
    const token = (env.NIMBUSQ_API_TOKENS as string).split(",")[0]?.replace(/^admin:/, "") as string;
    const headers = { authorization: `Bearer ${token}` };
    type Answer = { statusCode: number; body: string };
    const options = (event: unknown) => ({ cwd: copy.dir, env, event });

    const doc = await importInFreshNode<Answer>(http, options(apiGatewayV2Event({ path: "/openapi.json" })));
    expect(doc.result.statusCode).toBe(200);
    expect(JSON.parse(doc.result.body).openapi).toBe("3.1.0");
    // Written at build time (infra/build/prebuilt-openapi.ts): the very text the sources write.
    expect(env.NIMBUSQ_API_URL).toBeUndefined();
    expect(doc.result.body).toBe(JSON.stringify(openApiDocument()));
    const apiUrl = "https://api.example.com/v1";
    const served = await importInFreshNode<Answer>(http, {
      ...options(apiGatewayV2Event({ path: "/openapi.json" })),
      env: { ...env, NIMBUSQ_API_URL: apiUrl },
    });
    expect(served.result.body).toBe(JSON.stringify(openApiDocument([{ url: apiUrl }])));

    const added = await importInFreshNode<Answer>(
      http,
      options(
        functionUrlEvent({
          method: "POST",
          path: "/queues/email/jobs",
          headers,
          body: { name: "send", data: {} },
        }),
      ),
    );
    expect(added.result.statusCode).toBe(202);
    const { id } = JSON.parse(added.result.body) as { id: string };
    const read = await importInFreshNode<Answer>(
      http,
      options(apiGatewayV2Event({ path: `/queues/email/jobs/${id}`, headers })),
    );
    expect(read.result.statusCode).toBe(200);
    expect(JSON.parse(read.result.body)).toMatchObject({ id, name: "send", state: "waiting" });
  });

  it("send a script's source from the packed table to a server that knows no script", async () => {
    // A private REST server and redis-server, new: the add's EVALSHA answers NOSCRIPT, and the
    // bundle sends the source its table holds; the server files it under the SHA-1 the bundle asked for.
    const stack = await startPrivateStack();
    try {
      const http = copy.bundles.find((b) => b.name === "http")?.file as string;
      const env: Record<string, string> = {
        ...environmentOf("http"),
        UPSTASH_REDIS_REST_URL: stack.rest.url,
        UPSTASH_REDIS_REST_TOKEN: stack.rest.token,
        NIMBUSQ_PREFIX: uniquePrefix("pkg"),
        NIMBUSQ_WORKERS: "",
        NIMBUSQ_API_TOKENS: "admin:pkg-test-token",
      };
      expect(await stack.redis.scriptExists(addJobs.sha1)).toEqual([0]);
      const added = await postJob(http, env, "pkg-test-token");
      expect(added.result.statusCode).toBe(202);
      expect(await stack.redis.scriptExists(addJobs.sha1)).toEqual([1]);
    } finally {
      await stack.stop();
    }
  });

  it("serve requests over TCP: the HTTP bundle with NIMBUSQ_REDIS_URL loads the ioredis shipped beside it", async () => {
    const http = copy.bundles.find((b) => b.name === "http")?.file as string;
    const prefix = uniquePrefix("pkg");
    const env: Record<string, string> = {
      ...environmentOf("http"),
      NIMBUSQ_REDIS_URL: `redis://${inject("redisHost")}:${inject("redisPort")}`,
      NIMBUSQ_PREFIX: prefix,
      NIMBUSQ_WORKERS: "",
      NIMBUSQ_API_TOKENS: "admin:pkg-tcp-token",
    };
    delete env.UPSTASH_REDIS_REST_URL;
    delete env.UPSTASH_REDIS_REST_TOKEN_PARAM;
    const added = await postJob(http, env, "pkg-tcp-token");
    expect(added.result.statusCode).toBe(202);
    const { id } = JSON.parse(added.result.body) as { id: string };
    const job = await new Queue("email", { redis: sharedRedis(), prefix }).getJob(id);
    expect(job?.name).toBe("send");
  });

  it("serve requests: the SQS producer bundle adds good messages and reports the bad one", async () => {
    const producer = copy.bundles.find((b) => b.name === "sqs-email-producer")?.file as string;
    const event = sqsEvent([
      { body: JSON.stringify({ to: "a@example.com", subject: "hi" }) },
      { body: "not json" },
    ]);
    const answer = await importInFreshNode<{ batchItemFailures: { itemIdentifier: string }[] }>(producer, {
      cwd: copy.dir,
      env: {
        ...environmentOf("sqs-email-producer"),
        UPSTASH_REDIS_REST_URL: inject("restUrl"),
        UPSTASH_REDIS_REST_TOKEN: inject("restToken"),
        NIMBUSQ_PREFIX: uniquePrefix("pkg"),
      },
      event,
    });
    expect(answer.result).toEqual({ batchItemFailures: [{ itemIdentifier: event.Records[1]?.messageId }] });
  });
});
