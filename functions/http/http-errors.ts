/**
 * Every error answer has one shape, `{ error: { code, message, field? } }`. Client mistakes map to
 * 4xx with what was wrong and where; anything else is a 500 that says nothing more than "internal
 * error" and is logged with its cause — a body never carries a stack trace.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import {
  JobBelongsToSchedulerError,
  JobIdInFlightError,
  JobLockedError,
  JobNotFoundError,
  JobNotInStateError,
  ParentConflictError,
  ParentNotFoundError,
  QueueStateError,
  RedisCallError,
  StagedAddExpiredError,
  ValidationError,
} from "../../core/index.ts";

export const errorCodes = {
  invalidRequest: "invalid_request",
  invalidJson: "invalid_json",
  unauthorized: "unauthorized",
  forbidden: "forbidden",
  notFound: "not_found",
  unknownQueue: "unknown_queue",
  jobNotFound: "job_not_found",
  methodNotAllowed: "method_not_allowed",
  idempotencyKeyReused: "idempotency_key_reused",
  jobLocked: "job_locked",
  wrongState: "wrong_state",
  parentNotFound: "parent_not_found",
  parentConflict: "parent_conflict",
  payloadTooLarge: "payload_too_large",
  jobInFlight: "job_in_flight",
  retryLater: "retry_later",
  unsupportedMediaType: "unsupported_media_type",
  internal: "internal",
} as const;

export type ErrorCode = (typeof errorCodes)[keyof typeof errorCodes];

export interface ErrorBody {
  error: { code: ErrorCode; message: string; field?: string };
}

/** An answer decided while handling a request; thrown so handlers stay straight-line. */
export class HttpError extends Error {
  override name = "HttpError" as const;

  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

/** A 400 naming the offending input. */
export function invalid(field: string, message: string): HttpError {
  return new HttpError(400, errorCodes.invalidRequest, message, field);
}

/** The HttpError a thrown error stands for, or undefined when it is a server fault. */
export function asHttpError(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (error instanceof ValidationError) return invalid(error.field, error.message);
  if (error instanceof JobNotFoundError) return new HttpError(404, errorCodes.jobNotFound, error.message);
  if (error instanceof JobLockedError) return new HttpError(409, errorCodes.jobLocked, error.message);
  if (
    error instanceof JobNotInStateError ||
    error instanceof JobBelongsToSchedulerError ||
    error instanceof QueueStateError
  )
    return new HttpError(409, errorCodes.wrongState, error.message);
  if (error instanceof ParentNotFoundError)
    return new HttpError(400, errorCodes.parentNotFound, error.message);
  if (error instanceof ParentConflictError)
    return new HttpError(409, errorCodes.parentConflict, error.message);
  // A large add still staging holds this custom id: the same request a moment later answers
  // "duplicated" or creates it.
  if (error instanceof JobIdInFlightError)
    return new HttpError(409, errorCodes.jobInFlight, error.message, undefined, { "Retry-After": "1" });
  // A staged add that took longer than its staging lives wrote nothing visible: it can be sent again.
  if (error instanceof StagedAddExpiredError)
    return new HttpError(503, errorCodes.retryLater, error.message, undefined, { "Retry-After": "1" });
  // Redis stayed unreachable for the whole retry window: nothing was decided, the request may come again.
  if (error instanceof RedisCallError && error.transient)
    return new HttpError(503, errorCodes.retryLater, "storage unavailable, try again", undefined, {
      "Retry-After": "1",
    });
  // Hono's own (e.g. a malformed request it refuses); keep its status, not its body.
  if (error instanceof HTTPException && error.status < 500)
    return new HttpError(error.status as ContentfulStatusCode, errorCodes.invalidRequest, error.message);
  return undefined;
}

export function errorBody(error: HttpError): ErrorBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.field === undefined ? {} : { field: error.field }),
    },
  };
}

/** The JSON answer for any thrown error; server faults are logged here. */
export function errorResponse(
  c: Context,
  error: unknown,
  log: (message: string, error: unknown) => void,
): Response {
  const known = asHttpError(error);
  // An outage that outlasted the retries is answered 503 but still logged: operators need to see it.
  if (error instanceof RedisCallError) log(`nimbusq http: ${c.req.method} ${c.req.path} failed`, error);
  if (known) return c.json(errorBody(known), known.status, known.headers);
  if (error instanceof RedisCallError)
    return c.json(
      { error: { code: errorCodes.internal, message: "internal error" } } satisfies ErrorBody,
      500,
    );
  log(`nimbusq http: ${c.req.method} ${c.req.path} failed`, error);
  return c.json({ error: { code: errorCodes.internal, message: "internal error" } } satisfies ErrorBody, 500);
}
