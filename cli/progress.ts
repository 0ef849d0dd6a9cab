/**
 * Progress of long operations on stderr (stdout keeps the one answer, `--json` or text), and the loop
 * that runs an operation of unknown size in bounded steps so there is progress to show.
 *
 * Core's clean, retryJobs and redrive each run their own bounded script calls but report only at the
 * end; each takes a limit, so the CLI calls them `step` jobs at a time and reports between calls.
 */

export interface Progress {
  /** Replaces the progress line (a terminal) or writes one more line (a pipe or file). */
  update(line: string): void;
  /** Ends the progress line, if one is showing. */
  done(): void;
}

export function stderrProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  let showing = false;
  return {
    update(line) {
      if (stream.isTTY) {
        stream.write(`\r\u001b[K${line}`);
        showing = true;
      } else {
        stream.write(`${line}\n`);
      }
    },
    done() {
      if (showing) stream.write("\n");
      showing = false;
    },
  };
}

/** Jobs per call of a stepped operation: about two core script calls each, a progress line each. */
export const stepSize = 1000;

export interface StepResult {
  /** How many jobs this call handled. */
  handled: number;
  /** Nothing is left to do (otherwise a call that handled a full step goes on). */
  finished: boolean;
}

/**
 * Calls `step(max)` until it finishes, handles fewer than `max` jobs, or `limit` jobs are handled in
 * all; returns the total. `describe(total)` words the progress line shown after each full step.
 */
export async function inSteps(
  progress: Progress,
  limit: number,
  step: (max: number) => Promise<StepResult>,
  describe: (total: number) => string,
): Promise<number> {
  let total = 0;
  try {
    while (total < limit) {
      const max = Math.min(stepSize, limit - total);
      const result = await step(max);
      total += result.handled;
      if (result.finished || result.handled < max || total >= limit) break;
      progress.update(describe(total));
    }
  } finally {
    progress.done();
  }
  return total;
}
