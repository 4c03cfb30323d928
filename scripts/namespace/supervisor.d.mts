/** Types for scripts/namespace/supervisor.mjs (the e2e tests import it). */
export interface Supervisor {
  url: string;
  scripts: Map<string, { port: number; metadata: { tags?: string[] } }>;
  close(): Promise<void>;
}
export function startSupervisor(options?: { port?: number; stateDir?: string; releaseStore?: string; apiToken?: string | null; echo?: boolean }): Promise<Supervisor>;
