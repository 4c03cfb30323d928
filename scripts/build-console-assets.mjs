/**
 * Builds the admin console's client scripts (issue 30) into the worker's static assets: `assets-src/admin/*.js`
 * bundled and minified by esbuild into `public/admin/assets/`, served by Workers static assets (wrangler.toml
 * `[assets]`), so they never weigh on the worker bundle. Run by wrangler's `[build]` before `wrangler dev` and
 * `wrangler deploy`; `node scripts/build-console-assets.mjs` runs it by hand.
 */
import { build } from "esbuild";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

// Written to a temporary name, then renamed into place: several `wrangler dev` may start at once (the e2e suite
// runs two files at a time) and none may read a half-written file.
const result = await build({
  entryPoints: [join(ROOT, "assets-src", "admin", "editor.js")],
  outdir: join(ROOT, "public", "admin", "assets"),
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  legalComments: "linked",
  logLevel: "warning",
  write: false,
});
for (const file of result.outputFiles) {
  await mkdir(dirname(file.path), { recursive: true });
  const temporary = `${file.path}.${process.pid}.tmp`;
  await writeFile(temporary, file.contents);
  await rename(temporary, file.path);
}
