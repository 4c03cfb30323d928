import { findChromium } from "../../scripts/chromium.mjs";

/**
 * Before any end-to-end file starts a server: find the browser (scripts/chromium.mjs) and hand its path to the
 * test processes (forked after this runs, so they inherit it). Without one the run stops here with one line
 * saying what to do, rather than as many failed browser tests as there are, each with a launch stack trace.
 */
export default async function setup() {
  const found = await findChromium();
  if ("error" in found) {
    console.error(`\n${found.error}\n`);
    process.exit(1);
  }
  process.env.GATEHOUSE_E2E_CHROMIUM = found.path;
}
