/** Every file under a folder whose name ends with `suffix`, for the tests that read the sources. */
import { readdirSync } from "node:fs";
import { join } from "node:path";

export function filesEndingWith(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesEndingWith(join(dir, entry.name), suffix)
      : entry.name.endsWith(suffix)
        ? [join(dir, entry.name)]
        : [],
  );
}
