/**
 * `npm run lockfile`: adds lockfile entries for optional platform packages (Biome's, msgpackr's…) that
 * the registry this project is built against does not serve. npm only records the optional packages
 * it could resolve, and `npm ci` then refuses the lockfile as out of sync. An entry with the
 * package's os/cpu/libc is enough: npm skips it on every other platform and never fetches it.
 * Run it after every `npm install` that changes package-lock.json.
 */
import { readFileSync, writeFileSync } from "node:fs";

interface LockEntry {
  version?: string;
  optional?: boolean;
  dev?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  optionalDependencies?: Record<string, string>;
}

const platforms: [RegExp, Pick<LockEntry, "os" | "cpu" | "libc">][] = [
  [/android-arm64/, { os: ["android"], cpu: ["arm64"] }],
  [/android-x64/, { os: ["android"], cpu: ["x64"] }],
  [/darwin-arm64/, { os: ["darwin"], cpu: ["arm64"] }],
  [/darwin-x64/, { os: ["darwin"], cpu: ["x64"] }],
  [/linux-arm64-musl/, { os: ["linux"], cpu: ["arm64"], libc: ["musl"] }],
  [/linux-x64-musl/, { os: ["linux"], cpu: ["x64"], libc: ["musl"] }],
  [/linux-arm64/, { os: ["linux"], cpu: ["arm64"] }],
  [/linux-arm$/, { os: ["linux"], cpu: ["arm"] }],
  [/linux-x64/, { os: ["linux"], cpu: ["x64"] }],
  [/win32-arm64/, { os: ["win32"], cpu: ["arm64"] }],
  [/win32-x64/, { os: ["win32"], cpu: ["x64"] }],
];

const path = "package-lock.json";
const lock = JSON.parse(readFileSync(path, "utf8")) as { packages: Record<string, LockEntry> };
let added = 0;
for (const [where, entry] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key] || lock.packages[`${where}/${key}`]) continue;
    const platform = platforms.find(([pattern]) => pattern.test(name))?.[1];
    if (!platform) continue;
    lock.packages[key] = {
      version: range.replace(/^[\^~=]/, ""),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...platform,
    };
    added += 1;
    console.log(`added ${key}@${lock.packages[key]?.version}`);
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`${added} optional platform entries added`);
