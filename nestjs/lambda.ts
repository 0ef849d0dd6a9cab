/**
 * nestWorkerHandler: a worker Lambda whose processor is a Nest @Processor class. The application
 * context boots once per container, at the first invocation (its promise is cached; a boot that fails
 * is retried by the next invocation); each invocation then drains exactly as `workerHandler` does,
 * with the invocation's deadline.
 *
 * @example
 * export const handler = nestWorkerHandler(AppModule, "email", { jobTimeoutMs: 20_000 });
 */
import { type DynamicModule, type INestApplicationContext, Module, type Type } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import {
  type WorkerEvent,
  type WorkerHandlerOptions,
  type WorkerHandlerResult,
  workerHandler,
} from "../functions/index.ts";
import { NimbusqExplorer } from "./explorer.ts";
import { LAMBDA_QUEUE_TOKEN } from "./tokens.ts";

export interface NestWorkerHandlerOptions
  extends Omit<WorkerHandlerOptions<unknown, unknown>, "queue" | "processor" | "onWorker"> {
  /** Options of `NestFactory.createApplicationContext` (default: only error and warn logs). */
  appOptions?: Parameters<typeof NestFactory.createApplicationContext>[1];
}

type LambdaContext = Parameters<ReturnType<typeof workerHandler>>[1];

export interface NestWorkerHandler {
  (event: WorkerEvent | undefined, context: LambdaContext): Promise<WorkerHandlerResult>;
  /** The booted application context (boots it if no invocation has yet). */
  app(): Promise<INestApplicationContext>;
  /** Closes the application context (and the worker) if it was booted; the next invocation boots anew. */
  close(): Promise<void>;
}

class NimbusqLambdaRoot {}
Module({})(NimbusqLambdaRoot);
class NimbusqLambdaFlag {}
Module({})(NimbusqLambdaFlag);

/** The app's module beside a global marker that tells the explorer to leave the worker to the handler. */
function lambdaRoot(appModule: Type | DynamicModule, queue: string): DynamicModule {
  const flag = { provide: LAMBDA_QUEUE_TOKEN, useValue: queue };
  return {
    module: NimbusqLambdaRoot,
    imports: [appModule, { module: NimbusqLambdaFlag, global: true, providers: [flag], exports: [flag] }],
  };
}

interface Booted {
  app: INestApplicationContext;
  handle: ReturnType<typeof workerHandler>;
}

export function nestWorkerHandler(
  appModule: Type | DynamicModule,
  queue: string,
  options: NestWorkerHandlerOptions = {},
): NestWorkerHandler {
  const { appOptions, ...handlerOptions } = options;
  let booting: Promise<Booted> | undefined;

  const boot = async (): Promise<Booted> => {
    const app = await NestFactory.createApplicationContext(lambdaRoot(appModule, queue), {
      logger: ["error", "warn"],
      ...appOptions,
    });
    try {
      const found = app.get(NimbusqExplorer, { strict: false }).processorFor(queue);
      const handle = workerHandler({
        ...found.workerOptions,
        ...handlerOptions,
        queue,
        processor: found.processor,
        onWorker: found.attach,
      });
      return { app, handle };
    } catch (error) {
      await app.close();
      throw error;
    }
  };
  const booted = (): Promise<Booted> => {
    booting ??= boot().catch((error: unknown) => {
      booting = undefined;
      throw error;
    });
    return booting;
  };

  const handler = async (event: WorkerEvent | undefined, context: LambdaContext) =>
    (await booted()).handle(event, context);
  return Object.assign(handler, {
    app: async () => (await booted()).app,
    close: async () => {
      const current = booting;
      booting = undefined;
      if (current) await (await current).app.close();
    },
  });
}
