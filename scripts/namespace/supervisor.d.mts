/** Types for scripts/namespace/supervisor.mjs (the e2e tests import it). */
export interface Supervisor {
  url: string;
  scripts: Map<string, { port: number; metadata: { tags?: string[] } }>;
  aliases: Map<string, string>;
  /** Runs `fn(script, path)` before each request reaches a script; an answer it returns is sent instead. Returns a remover. */
  intercept(fn: (script: string, path: string) => Promise<{ status: number; body?: unknown } | undefined>): () => void;
  close(): Promise<void>;
}
export function startSupervisor(options?: { port?: number; stateDir?: string; releaseStore?: string; apiToken?: string | null; echo?: boolean }): Promise<Supervisor>;
