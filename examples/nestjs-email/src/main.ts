/**
 * The long-running form (a container): the Nest HTTP app serves `POST /send-email` (EmailController,
 * on @nestjs/platform-express) while the processors run (autorun). SIGTERM closes the app: the HTTP
 * server stops, leased-but-unstarted jobs go back to the queue and running ones finish.
 */
import "reflect-metadata";
import { NestFactory } from "@nestjs/core";
import { AppModule } from "./app.module.js";
import { ReportScheduler } from "./report.js";

// UPSTASH_REDIS_REST_URL and _TOKEN say where Redis is; NIMBUSQ_PREFIX, if set, its key prefix.
const prefix = process.env.NIMBUSQ_PREFIX;
const app = await NestFactory.create(AppModule.register(prefix ? { prefix } : {}));
app.enableShutdownHooks();
await app.get(ReportScheduler).scheduleDailyReport();
// 3001: the repository's `npm start` serves its HTTP API on 3000.
await app.listen(Number(process.env.PORT ?? 3001));
console.log(`nestjs-email listening on ${await app.getUrl()}`);
