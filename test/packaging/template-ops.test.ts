/**
 * Operations in the deployed template (`osls package`, offline, three runs with different
 * `--param`s): alarms and their topic, one least-privilege role per function, concurrency caps and
 * throttling, secrets by parameter name only, tracing and Lambda's JSON logging. The bundles are
 * stand-ins here; packaging.test.ts checks the real ones.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoQueues } from "../../examples/demo/demo-queues.ts";
import { workersFromEnv } from "../../functions/config/workers-env.ts";
import { functionEntries } from "../../infra/build/functions.ts";
import { queueMetricNames } from "../support/emf-names.ts";
import { deployed } from "./deployed.ts";
import { type CloudFormationTemplate, packageService, type ServiceCopy, serviceCopy } from "./service.ts";

const stage = "ops";
const service = "nimbusq";
const names = functionEntries.map((fn) => fn.name);
const workerNames = demoQueues.map((q) => `${q.name}-worker`);
const topicArn = "arn:aws:sns:us-east-1:123456789012:nimbusq-ops-pager";
/** Secret values handed over as parameters, the way the old template took them: none may land anywhere. */
const secretValues = { upstashToken: "upstash-secret-4f1d7a", apiTokens: "admin:api-secret-9c2e51" };

interface Run {
  /** As CloudFormation would create it: conditions applied. */
  stack: CloudFormationTemplate;
  text: string;
}

let copy: ServiceCopy;
let byDefault: Run;
let switchedOff: Run;
let ownTopic: Run;
let inVpc: Run;

beforeAll(async () => {
  copy = await serviceCopy({ bundles: false });
  const run = async (params: Record<string, string>): Promise<Run> => {
    const { template } = await packageService(copy, stage, [], params);
    return { stack: deployed(template), text: JSON.stringify(template) };
  };
  byDefault = await run({});
  switchedOff = await run({
    alarms: "off",
    tracing: "PassThrough",
    logLevel: "WARN",
    httpRateLimit: "5",
    httpBurstLimit: "9",
    httpReservedConcurrency: "7",
    ...secretValues,
  });
  ownTopic = await run({
    alarmTopicArn: topicArn,
    alarmOldestWaitingSeconds: "90",
    alarmFailedPerMinute: "3",
  });
  inVpc = await run({
    vpc: "on",
    vpcId: "vpc-0a1b2c",
    vpcSubnetIds: "subnet-1,subnet-2",
    vpcSecurityGroupIds: "sg-9",
    redisUrlParameter: "/nimbusq/ops/redis-url",
  });
}, 150_000);

afterAll(() => copy?.remove());

type Props = Record<string, unknown>;

function ofType(run: Run, type: string): [string, Props][] {
  return Object.entries(run.stack.Resources)
    .filter(([, r]) => r.Type === type)
    .map(([id, r]) => [id, r.Properties ?? {}]);
}

function lambda(run: Run, name: string): Props {
  const found = ofType(run, "AWS::Lambda::Function").find(
    ([, p]) => p.FunctionName === `${service}-${stage}-${name}`,
  );
  if (!found) throw new Error(`no function ${name}`);
  return found[1];
}

function environment(run: Run, name: string): Record<string, string> {
  const variables = ((lambda(run, name).Environment as Props | undefined)?.Variables ?? {}) as Props;
  return Object.fromEntries(Object.entries(variables).filter(([, v]) => typeof v === "string")) as Record<
    string,
    string
  >;
}

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

function statementsOf(run: Run, name: string): Statement[] {
  const roleId = ((lambda(run, name).Role as Props)["Fn::GetAtt"] as string[])[0] as string;
  const role = run.stack.Resources[roleId];
  expect(role?.Type, name).toBe("AWS::IAM::Role");
  const policies = (role?.Properties?.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[];
  return policies.flatMap((p) => p.PolicyDocument.Statement);
}

const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** action → the resources it is allowed on (JSON, sorted). */
function grants(statements: Statement[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of statements) {
    expect(s.Effect).toBe("Allow");
    for (const action of list(s.Action)) {
      const resources = out[action] ?? [];
      for (const resource of list(s.Resource)) resources.push(JSON.stringify(resource));
      out[action] = resources;
    }
  }
  for (const resources of Object.values(out)) resources.sort();
  return out;
}

const sub = (text: string) => JSON.stringify({ "Fn::Sub": text });
const account = `\${AWS::Partition}:%s:\${AWS::Region}:\${AWS::AccountId}`;
const arn = (service: string, rest: string) => sub(`arn:${account.replace("%s", service)}:${rest}`);
const functionArn = (name: string) => arn("lambda", `function:${service}-${stage}-${name}`);
const parameterArn = (parameter: string) => arn("ssm", `parameter${parameter}`);
const xray = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"];

/** What each function may do besides logging and reading its own secrets. */
function ownGrants(name: string): Record<string, string[]> {
  const workers = workerNames.map(functionArn).sort();
  if (name === "http") return { "lambda:InvokeFunction": workers };
  if (name === "sweeper") {
    return {
      "lambda:InvokeFunction": workers,
      "events:PutEvents": [JSON.stringify({ "Fn::GetAtt": ["EventBus", "Arn"] })],
    };
  }
  if (workerNames.includes(name)) return { "lambda:InvokeFunction": [functionArn(name)] };
  const queue = [JSON.stringify({ "Fn::GetAtt": ["EmailRequestsQueue", "Arn"] })];
  return Object.fromEntries(
    ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"].map((a) => [a, queue]),
  );
}

describe("least privilege: one role per function", () => {
  it("gives every function a role of its own, and osls's shared role is gone", () => {
    const roles = ofType(byDefault, "AWS::IAM::Role").map(([id]) => id);
    expect(roles).toHaveLength(names.length);
    expect(roles).not.toContain("IamRoleLambdaExecution");
    const used = names.map((name) => (lambda(byDefault, name).Role as Props)["Fn::GetAtt"]);
    expect(used.map((ref) => (ref as string[])[1])).toEqual(names.map(() => "Arn"));
    expect(new Set(used.map((ref) => (ref as string[])[0]))).toEqual(new Set(roles));
  });

  it("allows each function its own logs and secrets, what it calls, and X-Ray writes — nothing more", () => {
    for (const name of names) {
      const statements = statementsOf(byDefault, name);
      // An empty parameter name (NIMBUSQ_REDIS_URL_PARAM without a VPC) names nothing to read.
      const parameters = Object.entries(environment(byDefault, name))
        .filter(([key, value]) => key.endsWith("_PARAM") && value !== "")
        .map(([, value]) => parameterArn(value))
        .sort();
      expect(parameters.length, name).toBeGreaterThan(0);
      const logGroup = arn("logs", `log-group:/aws/lambda/${service}-${stage}-${name}:*`);
      expect(grants(statements), name).toEqual({
        "logs:CreateLogStream": [logGroup],
        "logs:PutLogEvents": [logGroup],
        "ssm:GetParameter": parameters,
        "kms:Decrypt": [arn("kms", "key/*")],
        ...Object.fromEntries(xray.map((a) => [a, ['"*"']])),
        ...ownGrants(name),
      });
      // Decryption only through SSM, and only of this function's parameters.
      const decrypt = statements.find((s) => list(s.Action).includes("kms:Decrypt"));
      const equals = decrypt?.Condition?.StringEquals ?? {};
      expect(JSON.stringify(equals["kms:ViaService"])).toBe(sub(`ssm.\${AWS::Region}.amazonaws.com`));
      expect(
        list(equals["kms:EncryptionContext:PARAMETER_ARN"])
          .map((p) => JSON.stringify(p))
          .sort(),
      ).toEqual(parameters);
      // Resource "*" only where AWS allows nothing narrower.
      for (const s of statements) {
        if (list(s.Resource).includes("*")) expect(xray).toEqual(expect.arrayContaining(list(s.Action)));
        expect(list(s.Action).filter((a) => a.includes("*"))).toEqual([]);
      }
    }
  });

  it("drops the X-Ray writes with tracing off, and keeps every other grant", () => {
    for (const name of names) {
      const on = grants(statementsOf(byDefault, name));
      for (const action of xray) delete on[action];
      expect(grants(statementsOf(switchedOff, name)), name).toEqual(on);
    }
  });
});

describe("secrets", () => {
  it("names SSM parameters in the environment and never holds a secret value", () => {
    for (const run of [byDefault, switchedOff]) {
      for (const name of names) {
        const env = environment(run, name);
        expect(env.UPSTASH_REDIS_REST_TOKEN_PARAM, name).toBe(`/${service}/${stage}/upstash-token`);
        for (const key of ["UPSTASH_REDIS_REST_TOKEN", "NIMBUSQ_API_TOKENS", "NIMBUSQ_ADMIN_TOKENS"]) {
          expect(env, name).not.toHaveProperty(key);
        }
      }
      expect(environment(run, "http").NIMBUSQ_API_TOKENS_PARAM).toBe(`/${service}/${stage}/api-tokens`);
      // A dynamic reference is resolved into the function's configuration at deploy: a value.
      expect(run.text).not.toContain("{{resolve:");
    }
    for (const value of Object.values(secretValues)) expect(switchedOff.text).not.toContain(value);
  });
});

describe("Redis over TCP in a VPC (param vpc: on)", () => {
  it("puts every function in the subnets and security groups, with the endpoints it needs and the URL's parameter", () => {
    const split = (value: string) => ({ "Fn::Split": [",", value] });
    for (const name of names) {
      expect(lambda(inVpc, name).VpcConfig, name).toEqual({
        SubnetIds: split("subnet-1,subnet-2"),
        SecurityGroupIds: split("sg-9"),
      });
      expect(environment(inVpc, name).NIMBUSQ_REDIS_URL_PARAM, name).toBe("/nimbusq/ops/redis-url");
      expect(lambda(byDefault, name).VpcConfig, name).toBeUndefined();
      expect(environment(byDefault, name).NIMBUSQ_REDIS_URL_PARAM, name).toBe("");
    }
    const services = ofType(inVpc, "AWS::EC2::VPCEndpoint").map(([, p]) =>
      String((p.ServiceName as { "Fn::Sub": string })["Fn::Sub"])
        .split(".")
        .pop(),
    );
    expect(services.sort()).toEqual(["events", "lambda", "monitoring", "ssm", "xray"]);
    for (const [, endpoint] of ofType(inVpc, "AWS::EC2::VPCEndpoint")) {
      expect(endpoint).toMatchObject({
        VpcId: "vpc-0a1b2c",
        PrivateDnsEnabled: true,
        VpcEndpointType: "Interface",
      });
    }
    expect(ofType(byDefault, "AWS::EC2::VPCEndpoint")).toEqual([]);
    // Each role may manage the network interfaces of a function in a VPC, and read the URL's parameter.
    const roles = ofType(inVpc, "AWS::IAM::Role");
    expect(roles).toHaveLength(names.length);
    for (const [id, role] of roles)
      expect(JSON.stringify(role.ManagedPolicyArns), id).toContain("AWSLambdaVPCAccessExecutionRole");
    const [[, read] = ["", {}]] = ofType(inVpc, "AWS::IAM::Policy");
    expect((read.Roles as unknown[]).length).toBe(names.length);
    expect(JSON.stringify(read.PolicyDocument)).toContain("parameter/nimbusq/ops/redis-url");
  });
});

describe("caps and throttling", () => {
  it("reserves each worker's maxWorkers, one sweeper, and the HTTP function's parameter", () => {
    const queues = workersFromEnv(environment(byDefault, "sweeper"));
    expect(queues.map((q) => q.name)).toEqual(demoQueues.map((q) => q.name));
    for (const queue of queues) {
      const name = String(queue.workerFunction).slice(`${service}-${stage}-`.length);
      expect(lambda(byDefault, name).ReservedConcurrentExecutions, name).toBe(queue.maxWorkers);
      expect(queue.maxWorkers, name).toBe(demoQueues.find((q) => q.name === queue.name)?.maxWorkers);
    }
    expect(lambda(byDefault, "sweeper").ReservedConcurrentExecutions).toBe(1);
    expect(lambda(byDefault, "http").ReservedConcurrentExecutions).toBe(20);
    expect(Number(lambda(switchedOff, "http").ReservedConcurrentExecutions)).toBe(7);
  });

  it("throttles the HTTP API's stage (rate and burst parameters)", () => {
    const settings = (run: Run) => {
      const stages = ofType(run, "AWS::ApiGatewayV2::Stage");
      expect(stages).toHaveLength(1);
      const route = (stages[0]?.[1].DefaultRouteSettings ?? {}) as Props;
      return [Number(route.ThrottlingRateLimit), Number(route.ThrottlingBurstLimit)];
    };
    expect(settings(byDefault)).toEqual([50, 100]);
    expect(settings(switchedOff)).toEqual([5, 9]);
  });
});

describe("tracing and logs", () => {
  it("traces actively, logs JSON at the configured level, and maps stack traces, in every function", () => {
    for (const [run, mode, level] of [
      [byDefault, "Active", "INFO"],
      [switchedOff, "PassThrough", "WARN"],
    ] as const) {
      for (const name of names) {
        const fn = lambda(run, name);
        expect(fn.TracingConfig, name).toEqual({ Mode: mode });
        expect(fn.LoggingConfig, name).toEqual({ LogFormat: "JSON", ApplicationLogLevel: level });
        expect(environment(run, name).NODE_OPTIONS, name).toBe("--enable-source-maps");
      }
    }
  });
});

describe("alarms", () => {
  const alarms = (run: Run) => ofType(run, "AWS::CloudWatch::Alarm").map(([, p]) => p);
  const dimension = (p: Props) => (p.Dimensions as { Name: string; Value: string }[])[0];
  const shape = (p: Props) => [p.MetricName, p.Statistic, p.ComparisonOperator, Number(p.Threshold)];

  it("watch every queue's EMF metrics, the sweeper and each worker, by default", () => {
    const all = alarms(byDefault);
    expect(all).toHaveLength(3 * demoQueues.length + 2 + 2 * workerNames.length);
    for (const queue of demoQueues) {
      const mine = all.filter((p) => p.Namespace === "nimbusq" && dimension(p)?.Value === queue.name);
      for (const p of mine) {
        expect(p.Dimensions).toEqual([{ Name: "Queue", Value: queue.name }]);
        expect(queueMetricNames).toContain(p.MetricName);
      }
      expect(mine.map(shape).sort()).toEqual([
        ["DeadLetterDepth", "Maximum", "GreaterThanThreshold", 0],
        ["FailedSinceLastPass", "Sum", "GreaterThanThreshold", 10],
        ["OldestWaitingAgeSeconds", "Maximum", "GreaterThanThreshold", 300],
      ]);
      expect(mine.find((p) => p.MetricName === "FailedSinceLastPass")?.Period).toBe(60);
    }
    const ofFunction = (name: string) =>
      all.filter(
        (p) => p.Namespace === "AWS/Lambda" && dimension(p)?.Value === `${service}-${stage}-${name}`,
      );
    expect(ofFunction("sweeper").map(shape).sort()).toEqual([
      ["Errors", "Sum", "GreaterThanThreshold", 0],
      ["Invocations", "Sum", "LessThanThreshold", 1],
    ]);
    // Missed ticks: no invocation at all is no data, and no data must alarm.
    const ticks = ofFunction("sweeper").find((p) => p.MetricName === "Invocations") as Props;
    expect(ticks.TreatMissingData).toBe("breaching");
    expect(Number(ticks.EvaluationPeriods)).toBeGreaterThanOrEqual(2);
    for (const name of workerNames) {
      expect(ofFunction(name).map(shape).sort(), name).toEqual([
        ["Errors", "Sum", "GreaterThanThreshold", 0],
        ["Throttles", "Sum", "GreaterThanThreshold", 0],
      ]);
    }
    expect(new Set(all.map((p) => p.AlarmName)).size).toBe(all.length);
  });

  it("notify a topic the stack creates, or the topic given, on alarm and on recovery", () => {
    const topics = ofType(byDefault, "AWS::SNS::Topic");
    expect(topics).toHaveLength(1);
    const created = { Ref: topics[0]?.[0] };
    for (const p of alarms(byDefault)) {
      expect(p.AlarmActions, p.AlarmName as string).toEqual([created]);
      expect(p.OKActions, p.AlarmName as string).toEqual([created]);
    }
    expect(byDefault.stack.Outputs?.AlarmTopicArn).toEqual({ Value: created });

    expect(ofType(ownTopic, "AWS::SNS::Topic")).toEqual([]);
    const given = alarms(ownTopic);
    expect(given).toHaveLength(alarms(byDefault).length);
    for (const p of given) {
      expect(p.AlarmActions).toEqual([topicArn]);
      expect(p.OKActions).toEqual([topicArn]);
    }
    const thresholds = given.filter((p) => p.Namespace === "nimbusq").map(shape);
    expect(thresholds).toContainEqual(["OldestWaitingAgeSeconds", "Maximum", "GreaterThanThreshold", 90]);
    expect(thresholds).toContainEqual(["FailedSinceLastPass", "Sum", "GreaterThanThreshold", 3]);
  });

  it("are left out, topic included, with `alarms: off`", () => {
    expect(alarms(switchedOff)).toEqual([]);
    expect(ofType(switchedOff, "AWS::SNS::Topic")).toEqual([]);
    expect(switchedOff.stack.Outputs).not.toHaveProperty("AlarmTopicArn");
    expect(switchedOff.text).not.toContain("AWS::CloudWatch::Alarm");
  });
});
