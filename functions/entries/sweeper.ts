/**
 * Lambda entry of the sweeper (EventBridge `rate(1 minute)`), configured from the environment: see
 * `sweeperOptionsFromEnv` (`NIMBUSQ_WORKERS` or `NIMBUSQ_SWEEPER_CONFIG`, `NIMBUSQ_EVENT_BUS`,
 * `NIMBUSQ_SWEEPER_MODE`, `NIMBUSQ_PREFIX`).
 */
import { sweeperOptionsFromEnv } from "../config/sweeper-env.ts";
import { sweeperHandler } from "../sweeper.ts";

export const handler = sweeperHandler(sweeperOptionsFromEnv());
