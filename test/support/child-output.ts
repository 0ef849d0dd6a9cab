/** A child process's stdout and stderr, gathered as one text while it runs. */
import type { ChildProcess } from "node:child_process";

export function collectOutput(child: ChildProcess): () => string {
  let text = "";
  const add = (chunk: Buffer) => {
    text += chunk.toString();
  };
  child.stdout?.on("data", add);
  child.stderr?.on("data", add);
  return () => text;
}
