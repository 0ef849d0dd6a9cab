/**
 * A client of nimbusq's HTTP API written as any team would after generating types from
 * `/openapi.json` (`npx openapi-typescript <url>/openapi.json -o nimbusq-api.ts`): strict TypeScript,
 * `openapi-fetch`, nothing from nimbusq itself. typed-client.test.ts regenerates the types from the
 * live document, type-checks this file against them (strict) and runs it against a real server.
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/nimbusq-api.ts";

type Job = components["schemas"]["Job"];

// @ts-expect-error opts are typed and closed: a misspelt option does not compile
export const misspelt: components["schemas"]["JobOptions"] = { attemps: 3 };

export interface ClientRun {
  added: { id: string; state: string; outcome: string };
  finished: Job;
  polls: number;
  refused: { status: number; code: string; field: string | undefined };
}

/** Adds a job with options, waits for it to finish, and reads the typed error of a bad add. */
export async function addAndAwait(baseUrl: string, token: string, queue: string): Promise<ClientRun> {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });

  const { data: added, error } = await api.POST("/queues/{queue}/jobs", {
    params: { path: { queue } },
    body: {
      name: "welcome-email",
      data: { to: "ada@example.com" },
      opts: {
        jobId: "welcome-ada",
        attempts: 3,
        backoff: { type: "exponential", delay: 1000 },
        priority: 5,
      },
    },
  });
  if (error) throw new Error(`add failed: ${error.error.code}`);
  // One job answers an AddResult; an array would answer { jobs }.
  if (!("id" in added)) throw new Error("one job answers one AddResult");

  // `wait` holds each answer until the job finishes (or 2 s pass): a few polls at most.
  let finished: Job | undefined;
  let polls = 0;
  while (polls < 10 && finished?.state !== "completed") {
    polls += 1;
    const { data, error: readError } = await api.GET("/queues/{queue}/jobs/{id}", {
      params: { path: { queue, id: added.id }, query: { wait: 2000 } },
    });
    if (readError) throw new Error(`read failed: ${readError.error.code}`);
    finished = data;
  }
  if (!finished) throw new Error("never read the job");

  // A priority out of range compiles (a range is no type) and answers a typed 400.
  const bad = await api.POST("/queues/{queue}/jobs", {
    params: { path: { queue } },
    body: { name: "welcome-email", opts: { priority: -1 } },
  });
  const refusal = bad.error?.error;
  if (!refusal) throw new Error("a priority of -1 must be refused");

  return {
    added,
    finished,
    polls,
    refused: { status: bad.response.status, code: refusal.code, field: refusal.field },
  };
}
