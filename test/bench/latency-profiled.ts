/**
 * Enqueue → start under a network profile: production is never loopback. Every network request on
 * either side waits the same `delayMs` before it reaches its server: nimbusq's POST to the HTTP API
 * (a delaying TCP proxy in front of it) and each request the API and the worker make to the REST
 * server (its `delay` fault); each of BullMQ's Redis round trips (the same proxy in front of
 * redis-server). The worker "Lambda" is still invoked in-process: Lambda's own async-invoke delay is
 * not modelled (on AWS it comes on top, see the README).
 */
import { createRedis } from "../../core/index.ts";
import { startRestServer } from "../../infra/rest-server/server.ts";
import { type BenchEnv, round } from "./common.ts";
import { startDelayProxy } from "./delay-proxy.ts";
import {
  bullmqEnqueueToStart,
  type Distribution,
  distribution,
  nimbusqEnqueueToStart,
} from "./latency-stack.ts";

export interface ProfiledEnqueueToStart {
  delayMs: number;
  rounds: number;
  perRound: number;
  nimbusq: Distribution;
  bullmq: Distribution;
}

export async function runProfiledEnqueueToStart(
  env: BenchEnv,
  delayMs: number,
): Promise<ProfiledEnqueueToStart> {
  const target = { host: env.server.host, port: env.server.port };
  const rest = await startRestServer({
    redis: target,
    token: "bench-latency-delayed",
    countScriptCalls: false,
    declaredKeys: false,
    upstashMode: false,
  });
  rest.setFault({ kind: "delay", delayMs });
  const proxy = await startDelayProxy(target, delayMs);
  const rounds = env.quick ? 1 : 3;
  const perRound = env.quick ? 10 : 100;
  const warm = env.quick ? 2 : 5;
  const ours: number[] = [];
  const theirs: number[] = [];
  try {
    const redis = createRedis({ url: rest.url, token: rest.token });
    for (let r = 0; r < rounds; r++) {
      const nimbusq = await nimbusqEnqueueToStart(env, perRound, warm, { redis, postDelayMs: delayMs });
      ours.push(...nimbusq.latencies);
      const bullmq = await bullmqEnqueueToStart(env, perRound, warm, {
        ...env.connection,
        host: proxy.host,
        port: proxy.port,
      });
      theirs.push(...bullmq.latencies);
      env.log(
        `latency: enqueue→start with ${delayMs} ms per request, round ${r + 1}: nimbusq p50 ${round(distribution(nimbusq.latencies).p50)} ms, BullMQ p50 ${round(distribution(bullmq.latencies).p50)} ms`,
      );
    }
    return { delayMs, rounds, perRound, nimbusq: distribution(ours), bullmq: distribution(theirs) };
  } finally {
    await proxy.close();
    await rest.close();
  }
}
