/**
 * Sends the mail in process(): a throw is a retry (attempts/backoff from the job). onCompleted is a
 * notification after the fact: it only logs, and nothing it does could change the job's outcome.
 */
import { Logger } from "@nestjs/common";
import type { ActiveJob } from "nimbusq";
import { OnWorkerEvent, Processor, WorkerHost } from "nimbusq/nestjs";
// A value import, not `import type`: Nest injects MailTransport by the constructor's parameter type,
// which decorator metadata carries at run time.
// biome-ignore lint/style/useImportType: the class is needed at run time (emitDecoratorMetadata)
import { MailTransport, type SentMail } from "./mail-transport.js";
import { emailQueue } from "./queues.js";

@Processor(emailQueue, { concurrency: 10 })
export class EmailProcessor extends WorkerHost {
  private readonly logger = new Logger(EmailProcessor.name);

  constructor(private readonly transport: MailTransport) {
    super();
  }

  async process(job: ActiveJob<SentMail>): Promise<{ messageId: string }> {
    return await this.transport.send(job.data);
  }

  @OnWorkerEvent("completed")
  onCompleted(job: ActiveJob<SentMail>): void {
    this.logger.log(`mail ${job.id} to ${job.data.to} sent after ${job.attemptsMade} attempt(s)`);
  }
}
