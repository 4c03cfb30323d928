import type { AuditContext } from "../../../shared/types";
import type { ActionEffects } from "../../../shared/schemas/actions";
import type { Sql } from "../../sql";
import { LOG_TYPES } from "../core/audit";
import { emitAudit, type WriteTx } from "../core/events";
import { emitWarnings, recordExecution } from "./executions";
import { updateUser } from "../users/user-writes";

/**
 * Sets metadata keys an action asked for (`null` removes a key), keeping the rest: the users module's
 * PATCH semantics (`updateUser`), inside the caller's commit.
 */
export function mergeUserMetadata(sql: Sql, userId: string, changes: Pick<ActionEffects, "app_metadata" | "user_metadata">, now: number): boolean {
  const patch = {
    fields: {},
    ...(Object.keys(changes.app_metadata).length ? { app_metadata: changes.app_metadata } : {}),
    ...(Object.keys(changes.user_metadata).length ? { user_metadata: changes.user_metadata } : {}),
  };
  return updateUser(sql, userId, patch, now).ok;
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
