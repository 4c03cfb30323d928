/** Types for scripts/e2e-server.mjs (the TypeScript e2e tests import it). */

export interface RunningServer {
  /** `http://localhost:PORT` (no trailing slash). */
  baseUrl: string;
  /** `http://localhost:PORT/`: the ISSUER the worker was started with. */
  issuer: string;
  port: number;
  /** The control-plane client id (`gatehouse-control-plane` unless overridden in vars). */
  clientId: string;
  /** The control-plane client secret generated for this run. */
  clientSecret: string;
  /** Temporary directory holding the env file and the Durable Object state; removed by stop(). */
  persistDir: string;
  /** wrangler's output so far (last 200,000 characters; the shared server's: all of it). */
  log(): string;
  /** SIGTERM to the process group (SIGKILL after 10 s), then removes the temporary directory. */
  stop(): Promise<void>;
  /** SIGKILL to the process group (a crash); a caller-owned persistDir is kept. */
  kill(): Promise<void>;
}

export interface StartServerOptions {
  /** Extra variables or secrets for the worker; they override wrangler.toml and the generated secrets. */
  vars?: Record<string, string>;
  /** @default 90000 */
  timeoutMs?: number;
  /** Mirror wrangler's output to stderr. @default process.env.GATEHOUSE_E2E_LOG === "1" */
  echo?: boolean;
  /** The port to listen on, when a var (ISSUER) must name it beforehand. @default a free port */
  port?: number;
  /** wrangler configs, the first serving the port (the dispatcher topology). */
  configs?: string[];
  /** Reuse this state directory (neither created nor removed): restart on the same state after a crash. */
  persistDir?: string;
  /**
   * The caller touches no state another file reads: it gets the e2e suite's shared server when one runs (its
   * stop() is a no-op, its log() reads the file the global setup writes).
   */
  shareable?: boolean;
  /** Also write all of wrangler's output to this file as it arrives. */
  logFile?: string;
  /** false: the server does not keep the calling process alive (killed by the exit hook when it ends). @default true */
  holdsRunner?: boolean;
}

export const ROOT: string;
export const WRANGLER_JS: string;
export const WRANGLER_ENV: Record<string, string>;
export function randomSecret(): string;
export function nodeBinary(): string;
export function childEnv(extra?: Record<string, string>): Record<string, string | undefined>;
export function freePort(): Promise<number>;
export function waitForHttp(
  url: string,
  options?: { timeoutMs?: number; exited?: () => string | null; describe?: () => string },
): Promise<void>;
/**
 * fetch that also reaches `http://{tenant_id}.localhost:PORT/` (Node cannot resolve `*.localhost` and its fetch
 * overrides Host). No redirect following for those hosts. Other URLs use the global fetch.
 */
export function localFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
export function startServer(options?: StartServerOptions): Promise<RunningServer>;
