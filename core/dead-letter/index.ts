/** Dead letters: where jobs that fail for good are copied, and how they are moved back. */
export { type DeadLetterData, deadLetterId } from "./dead-letter.ts";
export { defaultDeadLetterQueue, type RedriveOptions, type RedriveResult } from "./redrive.ts";
