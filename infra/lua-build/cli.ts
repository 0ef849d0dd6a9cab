/** `npm run build:lua`: regenerates core/redis/generated/scripts.ts and codes.ts from lua/. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import {
  buildAllScripts,
  generateCodesModule,
  generatedCodesPath,
  generatedModulePath,
  generateModule,
} from "./generate.ts";

const scripts = buildAllScripts("lua");
mkdirSync(dirname(generatedModulePath), { recursive: true });
writeFileSync(generatedModulePath, generateModule(scripts));
writeFileSync(generatedCodesPath, generateCodesModule(scripts));
for (const script of scripts) {
  console.log(`${script.header.name.padEnd(24)} ${script.sha1}  ${script.source.length} bytes`);
}
