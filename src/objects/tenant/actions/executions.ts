import type { ActionExecutionRecord, ActionWarning } from "../../../shared/schemas/actions";
import { iso, json, type Sql } from "../../sql";
import { LOG_TYPES } from "../core/audit";
import { emitAudit, type WriteTx } from "../core/events";
import type { AlarmJob } from "../core/publisher";

/**
 * Action executions (SPEC §2.12): one row per dispatch of a trigger with each action's result, kept
 * `retentionDays` (10 by default) and deleted by the object's alarm in batches.
 */

/** Console output kept per action result (SPEC §8). */
export const EXECUTION_LOG_LIMIT = 256;
export const TRUNCATION_MARKER = "…[truncated]";
/** Executions deleted per alarm pass. */
export const EXECUTION_PURGE_BATCH = 1000;
const DAY_MS = 86_400_000;

/** Console output as stored: at most 256 characters, then the marker. */
export function truncateLogs(logs: string): { logs: string; logs_truncated: boolean } {
  const chars = [...logs];
  if (chars.length <= EXECUTION_LOG_LIMIT) return { logs, logs_truncated: false };
  return { logs: chars.slice(0, EXECUTION_LOG_LIMIT).join("") + TRUNCATION_MARKER, logs_truncated: true };
}

/** Stores an execution (idempotent by id: a redelivered dispatch keeps its first record). */
export function recordExecution(sql: Sql, execution: ActionExecutionRecord, now: number): void {
  const results = execution.results.map((r) => ({ ...r, ...truncateLogs(r.logs) }));
  sql.run`INSERT OR REPLACE INTO action_executions (id, trigger_id, status, results, created_at, updated_at)
    VALUES (${execution.id}, ${execution.trigger_id}, ${execution.status}, ${results},
      ${Date.parse(execution.created_at) || now}, ${now})`;
}

export function getExecution(sql: Sql, id: string): ActionExecutionRecord | null {
  const row = sql.first<Record<string, unknown>>`SELECT * FROM action_executions WHERE id = ${id}`;
  if (!row) return null;
  return {
    id: String(row.id),
    trigger_id: String(row.trigger_id),
    status: row.status as ActionExecutionRecord["status"],
    results: json(row.results as string, []),
    created_at: iso(row.created_at as number) as string,
    updated_at: iso(row.updated_at as number) as string,
  };
}

/**
 * A dispatch's warnings (a dropped claim ...) as `w` events in the tenant's logs, in the caller's commit:
 * the reference platform's "warnings during login" log type.
 */
export function emitWarnings(tx: WriteTx, warnings: readonly ActionWarning[]): void {
  for (const warning of warnings) {
    emitAudit(tx, { actor: { type: "system", id: null } }, {
      event_type: "action.warning",
      log_type: LOG_TYPES.warning,
      category: "system",
      description: warning.description,
      user_id: warning.user_id ?? null,
      client_id: warning.client_id ?? null,
      target: { type: "action_warning", id: null, after: warning.details },
    });
  }
}

/** The alarm job that deletes executions older than the retention window, one batch per pass. */
export function executionRetentionJob(sql: Sql, retentionDays: () => number): AlarmJob {
  return {
    name: "action_execution_retention",
    dueAt() {
      const oldest = sql.first<{ at: number | null }>`SELECT MIN(created_at) AS at FROM action_executions`?.at;
      return oldest == null ? null : oldest + retentionDays() * DAY_MS;
    },
    async run(now) {
      const cutoff = now - retentionDays() * DAY_MS;
      return sql.run`DELETE FROM action_executions WHERE id IN (SELECT id FROM action_executions
        WHERE created_at <= ${cutoff} ORDER BY created_at LIMIT ${EXECUTION_PURGE_BATCH})`;
    },
  };
}
