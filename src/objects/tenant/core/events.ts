import type { Result } from "../../../shared/errors";
import { redact } from "../../../shared/redact";
import type { AuditContext, Json } from "../../../shared/types";
import type { UserRecord } from "../../../shared/schemas/users";
import type { Sql } from "../../sql";
import { type AuditInput, buildAuditEvent, LOG_TYPES } from "./audit";
import type { OutboxEventInput } from "./outbox";

// The webhook triggers live in the shared schema (the console's form lists them too).
export { BLOCKING_TRIGGERS, type BlockingTrigger, DISPATCHABLE_TRIGGERS, OUTBOX_TRIGGERS, type OutboxTrigger } from "../../../shared/schemas/hooks";
import type { OutboxTrigger } from "../../../shared/schemas/hooks";

/** Event types of the object's own effects (revocations, emails ...): never logged, never sent to webhooks. */
export const isInternalEvent = (eventType: string) => eventType.startsWith("internal.");

/** What a write's transaction offers (the contract of `commit` in ARCHITECTURE.md §3). */
export interface WriteTx {
  sql: Sql;
  now: number;
  emit(event: OutboxEventInput): void;
  /**
   * Whether any destination of the relay would deliver an event of this type now (the object's write path
   * answers it from its destinations, in this transaction). Absent: every event is wanted.
   */
  wanted?(eventType: string): boolean;
}

/** Records one audit event in the write's transaction. */
export function emitAudit(tx: WriteTx, audit: AuditContext, input: AuditInput): void {
  tx.emit({ event_type: input.event_type, payload: buildAuditEvent(input, audit, tx.now) });
}

/**
 * Whether a `hook.{trigger}` event would reach anyone now: an enabled webhook of the trigger (the tenant's or,
 * with control-plane inheritance, its parent's), the code hooks of a relayed trigger, the registration
 * finalizer. Decided in the write's transaction, so a hook enabled later sees the events committed after it.
 */
export const hookWanted = (tx: WriteTx, trigger: OutboxTrigger): boolean => tx.wanted?.(`hook.${trigger}`) ?? true;

/**
 * Records a `hook.{trigger}` event (delivered to the trigger's webhooks by the relay), unless no destination
 * wants it ({@link hookWanted}: issue 31, a login wrote a `hook.post-user-login` row and relayed it to no
 * one). Answers whether it was recorded.
 */
export function emitHook(tx: WriteTx, trigger: OutboxTrigger, data: Record<string, Json>): boolean {
  if (!hookWanted(tx, trigger)) return false;
  // Metadata may hold anything a tenant stored (api keys in app_metadata ...): redacted like audit events.
  const redacted = redact(data) as Record<string, Json>;
  tx.emit({ event_type: `hook.${trigger}`, payload: { trigger_id: trigger, data: redacted, timestamp: new Date(tx.now).toISOString() } });
  return true;
}

/** A management write (SPEC §2.10: `{entity}.{action}`, `sapi` / `fapi`). */
export interface ManagementWrite<T> {
  entity: string;
  action: "created" | "updated" | "deleted";
  /** The entity id, known before the write or read from its result. */
  id: string | ((value: T) => string);
  before?: unknown;
  after?: (value: T) => unknown;
  /** Status of the success response. @default 200 (201 for created, 204 for deleted) */
  status?: number;
}

const DEFAULT_STATUS = { created: 201, updated: 200, deleted: 204 } as const;

/**
 * The one helper every management write goes through: it records `sapi` with the target's before, after
 * and diff when the write succeeded, `fapi` with the error status when it failed, and returns the result
 * unchanged. Both commit with the write.
 */
export function audited<T>(tx: WriteTx, audit: AuditContext, result: Result<T>, write: ManagementWrite<T>): Result<T> {
  const event_type = `${write.entity}.${write.action}`;
  if (!result.ok) {
    emitAudit(tx, audit, {
      event_type,
      log_type: LOG_TYPES.apiFailed,
      category: "admin_action",
      description: `Failed ${write.entity} ${write.action.replace(/d$/, "")}: ${result.error.message}`,
      target: { type: write.entity, id: typeof write.id === "string" ? write.id : null },
      response: { status_code: result.error.status, body: { message: result.error.message } },
    });
    return result;
  }
  const id = typeof write.id === "string" ? write.id : write.id(result.value);
  emitAudit(tx, audit, {
    event_type,
    log_type: LOG_TYPES.api,
    category: "admin_action",
    description: `${write.entity} ${write.action}`,
    target: {
      type: write.entity,
      id,
      ...(write.before !== undefined ? { before: write.before } : {}),
      ...(write.after && write.action !== "deleted" ? { after: write.after(result.value) } : {}),
    },
    response: { status_code: write.status ?? DEFAULT_STATUS[write.action] },
  });
  return result;
}

/** The user as hooks and logs see it: never the password hash. */
export function hookUser(user: UserRecord): Record<string, Json> {
  return { ...(user as unknown as Record<string, Json>) };
}
