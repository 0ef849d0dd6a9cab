/**
 * The example's queues: names of their own, so a root `npm start` (whose demo worker drains `email`)
 * can run beside it on the same local stack without taking its jobs.
 */
export const emailQueue = "nest-email";
export const reportsQueue = "nest-reports";
