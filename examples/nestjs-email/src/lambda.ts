/**
 * The Lambda form: one worker function per queue, each booting the Nest context once per container.
 * (The HTTP side can be the same Hono app through hono/aws-lambda's `handle`.)
 */
import "reflect-metadata";
import { nestWorkerHandler } from "../../../nestjs/index.ts";
import { AppModule } from "./app.module.ts";

export const emailWorker = nestWorkerHandler(AppModule.register(), "email", { jobTimeoutMs: 20_000 });
export const reportWorker = nestWorkerHandler(AppModule.register(), "reports", { jobTimeoutMs: 60_000 });
