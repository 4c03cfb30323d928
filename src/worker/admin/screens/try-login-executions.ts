import type { ConsoleContext } from "../context";

/** One action's part of an execution, with the trigger it ran for (GET /actions/executions/{id}). */
export interface Execution {
  trigger_id: string;
  action_name: string;
  error?: { msg: string };
  duration_ms: number;
  logs: string;
}
interface ExecutionRecord {
  trigger_id: string;
  results: Omit<Execution, "trigger_id">[];
}
interface LoginLog {
  details?: { actions?: { executions?: string[] } };
}

/** How long the page waits for the login's log event (the outbox writes it just after the login commits). */
const WAIT_MS = 2_000;
const POLL_MS = 150;
const quoted = (value: string) => `"${value.replace(/[\\"]/g, (m) => `\\${m}`)}"`;

/**
 * The actions a try-login ran: the tenant's successful-login event (`s`) for this user and test application
 * since the login started names its executions (details.actions.executions); each is read through
 * GET /actions/executions/{id}. The log is written by the outbox shortly after the login, so it is polled
 * for a moment.
 */
export async function findExecutions(c: ConsoleContext, tenant: string, clientId: string, userId: string, since: number): Promise<{ rows: Execution[]; error: string | null }> {
  const q = `type:s AND client_id:${quoted(clientId)} AND user_id:${quoted(userId)} AND date:[${since} TO *]`;
  const deadline = Date.now() + WAIT_MS;
  let ids: string[] | null = null;
  while (ids === null) {
    const logs = await c.var.api.get<LoginLog[]>(tenant, "/logs", { q, take: 1, sort: "date:-1" });
    if (!logs.ok) return { rows: [], error: logs.error };
    const list = Array.isArray(logs.body) ? logs.body : ((logs.body as { logs?: LoginLog[] }).logs ?? []);
    if (list[0]) ids = list[0].details?.actions?.executions ?? [];
    else if (Date.now() >= deadline) return { rows: [], error: "The login's log event has not arrived yet: the actions it ran are on its log entry." };
    else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const reads = await Promise.all(ids.map((id) => c.var.api.get<ExecutionRecord>(tenant, `/actions/executions/${encodeURIComponent(id)}`)));
  const failed = reads.find((r) => !r.ok);
  const rows = reads.filter((r) => r.ok).flatMap((r) => r.body.results.map((result) => ({ ...result, trigger_id: r.body.trigger_id })));
  return { rows, error: failed?.error ?? null };
}
