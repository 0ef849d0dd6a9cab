/**
 * The name of each script by its SHA-1, recorded by runScript as scripts are first called, so that the
 * port's errors and retry notices name the script (the port itself sees only the SHA or the source).
 */
const names = new Map<string, string>();

export function recordScriptName(sha1: string, name: string): void {
  if (!names.has(sha1)) names.set(sha1, name);
}

export function scriptNameOf(sha1: string): string | undefined {
  return names.get(sha1);
}
