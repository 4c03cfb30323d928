import { mkdir } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { ROOT } from "../../../scripts/e2e-server.mjs";

/**
 * Browser plumbing for the end-to-end suite: Debian's Chromium driven by playwright-core (no browser download,
 * ever), a tiny relying-party callback server on 127.0.0.1, and the screenshot folder.
 */

/** Found by test/e2e/global-setup.mjs (scripts/chromium.mjs) before any file runs; Debian's path otherwise. */
export const CHROMIUM_PATH = process.env.GATEHOUSE_E2E_CHROMIUM ?? "/usr/bin/chromium";

/** Screenshots land here (git-ignored with the rest of test-results/). */
export const SCREENSHOT_DIR = join(ROOT, "test-results", "screenshots");

/**
 * Chromium flags for this machine's closed network: no background connections (they are refused, many at a
 * time), no component or sync updates, no QUIC. The host-resolver rule makes every name but `localhost` (and
 * its subdomains, the tenant hosts) and 127.0.0.1 fail to resolve, so nothing the pages or Chromium ask for
 * can leave loopback. The rules apply to IP literals too, hence the explicit `EXCLUDE 127.0.0.1` (without
 * it a redirect to the 127.0.0.1 callback fails with ERR_NAME_NOT_RESOLVED).
 *
 * `--user-data-dir` is deliberately absent: `chromium.launch()` refuses it and always starts Chromium with a
 * new, empty temporary profile of its own, which it deletes on close.
 */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE *.localhost, EXCLUDE 127.0.0.1",
];

/** Launches headless Debian Chromium. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** Whether a URL stays on this machine (the only hosts a test may reach). */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === "localhost" || host.endsWith(".localhost") || host === "127.0.0.1" || host === "[::1]";
}

/** What a context saw: every request URL (each redirect hop included), console errors and page errors. */
export interface ContextLog {
  requests: string[];
  consoleErrors: string[];
  pageErrors: string[];
}

/**
 * A fresh browser context (its own cookie jar: a separate "browser user") that records every request it
 * makes, so a test can assert that nothing left loopback, plus console and page errors for failure reports.
 */
export async function newRecordedContext(browser: Browser): Promise<{ context: BrowserContext; page: Page; log: ContextLog }> {
  const context = await browser.newContext({ viewport: { width: 1000, height: 820 }, locale: "en-US" });
  context.setDefaultTimeout(30_000);
  context.setDefaultNavigationTimeout(45_000);
  const log: ContextLog = { requests: [], consoleErrors: [], pageErrors: [] };
  context.on("request", (request) => log.requests.push(request.url()));
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") log.consoleErrors.push(`${message.text()} @ ${message.location().url}`);
  });
  page.on("pageerror", (error) => log.pageErrors.push(String(error)));
  return { context, page, log };
}

/** Takes a full-page screenshot into SCREENSHOT_DIR and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, name);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A relying party's redirect target: records every request and answers "ok". */
export interface CallbackServer {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** Every URL received, absolute, in order. */
  received: URL[];
  /**
   * Resolves with the next request to `pathname` received after this call (create it before navigating).
   * Rejects after `timeoutMs`.
   */
  next(pathname: string, timeoutMs?: number): Promise<URL>;
  close(): Promise<void>;
}

/** Starts the callback server on 127.0.0.1 on a free port. */
export async function startCallbackServer(): Promise<CallbackServer> {
  const received: URL[] = [];
  const waiters: Array<{ pathname: string; resolve: (url: URL) => void }> = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", origin);
    received.push(url);
    const index = waiters.findIndex((w) => w.pathname === url.pathname);
    if (index >= 0) waiters.splice(index, 1)[0]?.resolve(url);
    res.writeHead(url.pathname === "/favicon.ico" ? 404 : 200, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
    res.end(url.pathname === "/favicon.ico" ? "" : "ok");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    received,
    next(pathname, timeoutMs = 45_000) {
      return new Promise<URL>((resolve, reject) => {
        const waiter = {
          pathname,
          resolve: (url: URL) => {
            clearTimeout(timer);
            resolve(url);
          },
        };
        const timer = setTimeout(() => {
          const i = waiters.indexOf(waiter);
          if (i >= 0) waiters.splice(i, 1);
          reject(new Error(`no request to ${origin}${pathname} within ${timeoutMs} ms (received: ${received.map(String).join(", ") || "nothing"})`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * axe on the page as it is (every rule axe runs by default), run in the page itself with `axe.run`
 * (AxeBuilder's legacy mode). AxeBuilder's default injects axe-core into the page twice and into a blank page it
 * opens to merge each frame's partial results, which only frames of another origin need; a page with such a frame
 * is refused here, so the results are the same as the default's, in about 40 % less time (CI's 15-minute budget:
 * the console's 32 analyses took 53-56 s, 33 s this way).
 */
export async function axeResults(page: Page) {
  const origin = new URL(page.url()).origin;
  const foreign = page.frames().filter((frame) => frame !== page.mainFrame() && !/^about:/.test(frame.url()) && new URL(frame.url()).origin !== origin);
  if (foreign.length) throw new Error(`a frame of another origin (${foreign.map((f) => f.url()).join(", ")}): run AxeBuilder's default mode on this page`);
  return new AxeBuilder({ page }).setLegacyMode(true).analyze();
}
