/**
 * `POST /send-email` → `202 { jobId, status: "queued" }`, a bad body → `400 { error, field }`. Served
 * here with Hono (nimbusq's own HTTP layer); with @nestjs/platform-express installed, a @Controller
 * with `@Post("send-email") @HttpCode(202)` calling EmailService.sendEmail does the same.
 */
import type { INestApplicationContext } from "@nestjs/common";
import { Hono } from "hono";
import { ValidationError } from "../../../core/index.ts";
import { EmailService } from "./email.service.ts";

export function createHttpApp(app: INestApplicationContext): Hono {
  const emails = app.get(EmailService);
  const http = new Hono();
  http.post("/send-email", async (c) => {
    const body = await c.req.json().catch(() => undefined);
    try {
      return c.json(await emails.sendEmail(body), 202);
    } catch (error) {
      if (error instanceof ValidationError) return c.json({ error: error.message, field: error.field }, 400);
      throw error;
    }
  });
  return http;
}
