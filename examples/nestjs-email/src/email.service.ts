/**
 * What EmailController (`POST /send-email`) calls: checks the body, enqueues, answers at once. The
 * mail is sent by EmailProcessor.process, where a failure retries with exponential backoff.
 */
import { Injectable } from "@nestjs/common";
import { type Queue, ValidationError } from "nimbusq";
import { InjectQueue } from "nimbusq/nestjs";
import type { SentMail } from "./mail-transport.js";
import { emailQueue } from "./queues.js";

export interface Queued {
  jobId: string;
  status: "queued";
}

@Injectable()
export class EmailService {
  constructor(@InjectQueue(emailQueue) private readonly queue: Queue<SentMail>) {}

  async sendEmail(body: unknown): Promise<Queued> {
    const { to, subject } = (body ?? {}) as Partial<Record<string, unknown>>;
    if (typeof to !== "string" || !/^[^@\s]+@[^@\s]+$/.test(to))
      throw new ValidationError("to", "an email address", "POST /send-email");
    if (typeof subject !== "string" || subject === "")
      throw new ValidationError("subject", "a non-empty string", "POST /send-email");
    const job = await this.queue.add(
      "send",
      { to, subject },
      { attempts: 5, backoff: { type: "exponential", delay: 1000 } },
    );
    return { jobId: job.id, status: "queued" };
  }
}
