/**
 * Apps for the lifecycle tests: a processor that waits for the test before finishing (shutdown mid-job),
 * one with `autorun: false`, and one run by nestWorkerHandler in a Lambda-shaped invocation.
 */
import { type DynamicModule, Injectable, Module } from "@nestjs/common";
import type { ActiveJob, UpstashRedisLike } from "../../../core/index.ts";
import { NimbusqModule, OnWorkerEvent, Processor, WorkerHost } from "../../../nestjs/index.ts";

export interface TestConfig {
  redis: UpstashRedisLike;
  prefix: string;
}

/** Lets the test see when a job starts and decide when it ends. */
@Injectable()
export class Gate {
  readonly started: string[] = [];
  private release: (() => void) | undefined;
  private readonly opened = new Promise<void>((resolve) => {
    this.release = resolve;
  });

  open(): void {
    this.release?.();
  }

  async pass(id: string): Promise<void> {
    this.started.push(id);
    await this.opened;
  }
}

@Processor("slow", { concurrency: 1, batchSize: 3 })
export class SlowProcessor extends WorkerHost {
  constructor(private readonly gate: Gate) {
    super();
  }

  async process(job: ActiveJob): Promise<string> {
    await this.gate.pass(job.id);
    return `done ${job.id}`;
  }
}

@Processor("manual", { autorun: false })
export class ManualProcessor extends WorkerHost {
  async process(job: ActiveJob<{ n: number }>): Promise<number> {
    return job.data.n * 2;
  }
}

@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module with a static factory
export class LifecycleModule {
  static forTest(config: TestConfig): DynamicModule {
    return {
      module: LifecycleModule,
      imports: [
        NimbusqModule.forRoot(config),
        NimbusqModule.registerQueue({ name: "slow" }, { name: "manual" }),
      ],
      providers: [Gate, SlowProcessor, ManualProcessor],
    };
  }
}

@Injectable()
export class Tally {
  readonly completed: string[] = [];
}

@Processor("lambda-email")
export class LambdaEmailProcessor extends WorkerHost {
  constructor(private readonly tally: Tally) {
    super();
  }

  async process(job: ActiveJob<{ ms: number }>): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, job.data.ms));
    return "sent";
  }

  @OnWorkerEvent("completed")
  onCompleted(job: ActiveJob): void {
    this.tally.completed.push(job.id);
  }
}

@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module with a static factory
export class LambdaModule {
  static forTest(config: TestConfig): DynamicModule {
    return {
      module: LambdaModule,
      imports: [NimbusqModule.forRootAsync({ useFactory: () => config })],
      providers: [Tally, LambdaEmailProcessor],
    };
  }
}
