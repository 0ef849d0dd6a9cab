/**
 * A Nest app as users write one (legacy decorators, constructor injection by type): a processor that
 * retries through a flaky mail service, a completed listener that throws, and a producer service with
 * an injected Queue and FlowProducer.
 */
import { type DynamicModule, Injectable, Module } from "@nestjs/common";
import type { ActiveJob, FlowProducer, Queue, UpstashRedisLike } from "../../../core/index.ts";
import {
  InjectFlowProducer,
  InjectQueue,
  NimbusqModule,
  OnWorkerEvent,
  Processor,
  WorkerHost,
} from "../../../nestjs/index.ts";

export interface TestConfig {
  redis: UpstashRedisLike;
  prefix: string;
}

@Injectable()
export class MailService {
  readonly sent: string[] = [];
  readonly tries = new Map<string, number>();

  /** Fails the first two tries of an address that starts with "flaky". */
  async send(to: string): Promise<string> {
    const tries = (this.tries.get(to) ?? 0) + 1;
    this.tries.set(to, tries);
    if (to.startsWith("flaky") && tries <= 2) throw new Error(`mail server refused ${to} (try ${tries})`);
    this.sent.push(to);
    return `sent to ${to}`;
  }
}

@Injectable()
export class EmailProducer {
  constructor(
    @InjectQueue("email") readonly queue: Queue<{ to: string }>,
    @InjectFlowProducer("flows") readonly flows: FlowProducer,
  ) {}

  send(to: string, attempts = 1) {
    return this.queue.add("send", { to }, { attempts, backoff: { type: "exponential", delay: 50 } });
  }
}

@Processor("email", { concurrency: 2 })
export class EmailProcessor extends WorkerHost {
  readonly completed: string[] = [];
  readonly failures: string[] = [];

  constructor(readonly mail: MailService) {
    super();
  }

  async process(job: ActiveJob<{ to: string }>): Promise<string> {
    return await this.mail.send(job.data.to);
  }

  @OnWorkerEvent("completed")
  onCompleted(job: ActiveJob): void {
    this.completed.push(job.id);
    throw new Error("listener boom");
  }

  @OnWorkerEvent("failed")
  async onFailed(_job: ActiveJob | undefined, error: Error): Promise<void> {
    this.failures.push(error.message);
    throw new Error("async listener boom");
  }
}

@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module with a static factory
export class EmailModule {
  static forTest(config: TestConfig): DynamicModule {
    return {
      module: EmailModule,
      imports: [
        NimbusqModule.forRoot(config),
        NimbusqModule.registerQueue({ name: "email", defaultJobOptions: { removeOnComplete: false } }),
        NimbusqModule.registerFlowProducer({ name: "flows" }),
      ],
      providers: [MailService, EmailProducer, EmailProcessor],
    };
  }
}
