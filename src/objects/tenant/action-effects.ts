import type { ActionEffects, AuditContext, Json } from "../../shared/types";
import type { Sql } from "../sql";
import { json } from "../sql";
import { LOG_TYPES } from "./audit";
import { emitAudit, type WriteTx } from "./events";
import { emitWarnings, recordExecution } from "./executions";

/**
 * Sets metadata keys an action asked for (`null` removes a key), keeping the rest. A minimal writer of its
 * own until the users facade offers PATCH-style metadata updates; replaceable by that call.
 */
export function mergeUserMetadata(sql: Sql, userId: string, changes: Pick<ActionEffects, "app_metadata" | "user_metadata">, now: number): boolean {
  const row = sql.first<{ app_metadata: string; user_metadata: string }>`SELECT app_metadata, user_metadata FROM users WHERE user_id = ${userId}`;
  if (!row) return false;
  const merge = (stored: string, patch: Record<string, Json>) => {
    const out = json<Record<string, Json>>(stored, {});
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete out[key];
      else out[key] = value;
    }
    return out;
  };
  sql.run`UPDATE users SET app_metadata = ${merge(row.app_metadata, changes.app_metadata)},
      user_metadata = ${merge(row.user_metadata, changes.user_metadata)}, updated_at = ${now}
    WHERE user_id = ${userId}`;
  return true;
}

/**
 * A dispatch's writes in the caller's commit: the execution record, its warnings, and the user's metadata
 * changes with their `user.updated` audit event.
 */
export function applyActionEffects(tx: WriteTx, audit: AuditContext, userId: string | null, effects: ActionEffects): void {
  if (effects.execution) recordExecution(tx.sql, effects.execution, tx.now);
  emitWarnings(tx, effects.warnings);
  const changed = Object.keys(effects.app_metadata).length + Object.keys(effects.user_metadata).length > 0;
  if (!userId || !changed) return;
  if (!mergeUserMetadata(tx.sql, userId, effects, tx.now)) return;
  emitAudit(tx, audit, {
    event_type: "user.updated",
    log_type: LOG_TYPES.api,
    category: "system",
    description: "User metadata updated by an action",
    user_id: userId,
    target: { type: "user", id: userId, after: { app_metadata: effects.app_metadata, user_metadata: effects.user_metadata } },
  });
}
