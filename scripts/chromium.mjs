/**
 * Finds the Chromium that the browser end-to-end tests drive with playwright-core (which never downloads one).
 *
 * In order: GATEHOUSE_E2E_CHROMIUM or CHROME_PATH when set (and then nothing else: a wrong explicit path is an
 * error, not a reason to test another browser), the usual system locations (Debian's `chromium`, Ubuntu's
 * `chromium-browser`, Google Chrome, macOS apps), those names on PATH, and last the Chromium that the
 * `@sparticuz/chromium` devDependency ships inside its npm tarball (extracted to the temporary directory on
 * first use; Chromium 153, verified headless on these machines with playwright-core, WebAuthn included).
 *
 * `node scripts/chromium.mjs` (npm's `pretest`) prints where the browser is, or one line saying what to do
 * and exits 1, so `npm test` fails at once instead of after the integration suite.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Environment variables that name a browser binary, the first set one wins. */
export const CHROMIUM_ENV = ["GATEHOUSE_E2E_CHROMIUM", "CHROME_PATH"];

/** Absolute locations tried before PATH. */
export const SYSTEM_CHROMIUM = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
  "/snap/bin/chromium",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
  "/Applications/Chromium.app/Contents/MacOS/Chromium",
];

/** Command names looked up on PATH. */
export const CHROMIUM_NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];

/** The one line printed when no browser can be had. */
export const NO_CHROMIUM =
  "No Chromium found for the browser tests: run `npm ci` (it installs @sparticuz/chromium), or `apt-get install chromium`, or set CHROME_PATH to a Chrome/Chromium binary.";

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The npm-shipped Chromium, or null when the package is absent (production install, pruned tree). */
async function bundledChromium() {
  let module;
  try {
    module = await import("@sparticuz/chromium");
  } catch {
    return null;
  }
  const path = await module.default.executablePath();
  return isExecutable(path) ? path : null;
}

/**
 * @param {object} [options] each defaults to the real machine; tests narrow them
 * @param {Record<string, string | undefined>} [options.env] @default process.env
 * @param {string[]} [options.system] @default SYSTEM_CHROMIUM
 * @param {boolean} [options.bundled] try @sparticuz/chromium last. @default true
 * @returns {Promise<{path: string, source: string} | {error: string}>}
 */
export async function findChromium({ env = process.env, system = SYSTEM_CHROMIUM, bundled = true } = {}) {
  for (const name of CHROMIUM_ENV) {
    const value = env[name];
    if (!value) continue;
    if (isExecutable(value)) return { path: value, source: name };
    return { error: `${name}=${value} is not an executable file: point it at a Chrome/Chromium binary or unset it.` };
  }
  for (const path of system) if (isExecutable(path)) return { path, source: "system" };
  for (const dir of (env.PATH ?? "").split(delimiter).filter(Boolean)) {
    for (const name of CHROMIUM_NAMES) {
      const path = join(dir, name);
      if (isExecutable(path)) return { path, source: "PATH" };
    }
  }
  const shipped = bundled ? await bundledChromium() : null;
  return shipped ? { path: shipped, source: "@sparticuz/chromium (npm)" } : { error: NO_CHROMIUM };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = await findChromium();
  if ("error" in found) {
    console.error(found.error);
    process.exit(1);
  }
  console.log(`Browser tests: Chromium at ${found.path} (${found.source}).`);
}
