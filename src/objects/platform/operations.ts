import { randomId } from "../../shared/crypto/random";
import { fail, ok, type Result } from "../../shared/errors";
import type {
  Json,
  OperationQuery,
  Tenant,
  TenantOperation,
  TenantOperationEvent,
  TenantOperationKind,
  TenantOperationStatus,
} from "../../shared/types";
import { iso, type Sql } from "../sql";
import { PlatformRpc } from "./rpc";
import { getTenant } from "./tenants";

/**
 * The operations journal (issue 16 point 5): `tenant_operations` (one row per provisioning, redeploy,
 * upgrade, deprovision) and `tenant_operation_events` (one row per step attempt: started, succeeded,
 * failed, with its duration and error). The durable executor (the provisioning Workflow) writes it step by
 * step; the management API reads it. At most one operation per tenant is pending or running at a time.
 */

type OperationRow = Omit<TenantOperation, "created_at" | "updated_at" | "started_at" | "finished_at" | "events"> & {
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
};

type EventRow = Omit<TenantOperationEvent, "created_at" | "detail"> & { created_at: number; detail: string | null };

function toOperation(row: OperationRow): TenantOperation {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    kind: row.kind,
    status: row.status,
    from_version: row.from_version ?? null,
    to_version: row.to_version ?? null,
    bundle_configuration: row.bundle_configuration ?? null,
    error: row.error ?? null,
    requested_by: row.requested_by ?? null,
    instance_id: row.instance_id ?? null,
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at) as string,
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
  };
}

function toEvent(row: EventRow): TenantOperationEvent {
  return {
    id: row.id,
    operation_id: row.operation_id,
    step: row.step,
    status: row.status,
    attempt: row.attempt,
    message: row.message ?? null,
    duration_ms: row.duration_ms ?? null,
    detail: row.detail ? (JSON.parse(row.detail) as { [key: string]: Json }) : null,
    created_at: iso(row.created_at) as string,
  };
}

export function getOperation(sql: Sql, id: string, withEvents = false): TenantOperation | null {
  const row = sql.first<OperationRow>`SELECT * FROM tenant_operations WHERE id = ${id}`;
  if (!row) return null;
  const operation = toOperation(row);
  if (withEvents) {
    operation.events = sql
      .all<EventRow>`SELECT * FROM tenant_operation_events WHERE operation_id = ${id} ORDER BY created_at, rowid`
      .map(toEvent);
  }
  return operation;
}

/** The tenant's pending or running operation, if any. */
export function activeOperation(sql: Sql, tenantId: string): TenantOperation | null {
  const row = sql.first<OperationRow>`SELECT * FROM tenant_operations
    WHERE tenant_id = ${tenantId} AND status IN ('pending', 'running') ORDER BY created_at DESC LIMIT 1`;
  return row ? toOperation(row) : null;
}

export interface NewOperation {
  tenant_id: string;
  kind: TenantOperationKind;
  to_version?: string | null;
  bundle_configuration?: string | null;
  requested_by?: string | null;
}

/** Opens an operation (pending); refused while another one of the tenant is pending or running. */
export function openOperation(sql: Sql, input: NewOperation, now: number): Result<TenantOperation> {
  const tenant = getTenant(sql, input.tenant_id);
  if (!tenant) return fail("tenant_not_found");
  const active = activeOperation(sql, input.tenant_id);
  if (active) return fail("operation_in_progress", { tenant_id: input.tenant_id, operation_id: active.id });
  const id = randomId("op_");
  sql.run`INSERT INTO tenant_operations (id, tenant_id, kind, status, from_version, to_version, bundle_configuration,
      requested_by, created_at, updated_at)
    VALUES (${id}, ${input.tenant_id}, ${input.kind}, 'pending', ${tenant.worker_version},
      ${input.to_version ?? tenant.worker_version}, ${input.bundle_configuration ?? tenant.bundle_configuration},
      ${input.requested_by ?? null}, ${now}, ${now})`;
  return ok(getOperation(sql, id) as TenantOperation);
}

/** Records the executor instance and marks the operation running (idempotent: a resumed run keeps started_at). */
export function startOperation(sql: Sql, id: string, instanceId: string | null, now: number): TenantOperation | null {
  sql.run`UPDATE tenant_operations SET status = 'running', instance_id = COALESCE(${instanceId}, instance_id),
      started_at = COALESCE(started_at, ${now}), updated_at = ${now}
    WHERE id = ${id} AND status IN ('pending', 'running')`;
  return getOperation(sql, id);
}

export interface StepEvent {
  step: string;
  status: TenantOperationEvent["status"];
  attempt?: number;
  message?: string | null;
  duration_ms?: number | null;
  detail?: { [key: string]: Json } | null;
}

/** Appends one step event to the timeline. */
export function recordStep(sql: Sql, operationId: string, event: StepEvent, now: number): TenantOperationEvent {
  const id = randomId("opev_");
  // Attempt number: how many times this step has started (a retry or a resumed run starts it again).
  const started = sql.first<{ n: number }>`SELECT count(*) AS n FROM tenant_operation_events
    WHERE operation_id = ${operationId} AND step = ${event.step} AND status = 'started'`?.n ?? 0;
  const attempt = event.attempt ?? (event.status === "started" ? started + 1 : Math.max(started, 1));
  sql.run`INSERT INTO tenant_operation_events (id, operation_id, step, status, attempt, message, duration_ms, detail, created_at)
    VALUES (${id}, ${operationId}, ${event.step}, ${event.status}, ${attempt}, ${event.message ?? null},
      ${event.duration_ms ?? null}, ${event.detail ? JSON.stringify(event.detail) : null}, ${now})`;
  sql.run`UPDATE tenant_operations SET updated_at = ${now} WHERE id = ${operationId}`;
  return toEvent(sql.first<EventRow>`SELECT * FROM tenant_operation_events WHERE id = ${id}` as EventRow);
}

/** Closes an operation once: a second finish (a replayed step) changes nothing. */
export function finishOperation(
  sql: Sql,
  id: string,
  status: Extract<TenantOperationStatus, "succeeded" | "failed">,
  error: string | null,
  now: number,
): TenantOperation | null {
  sql.run`UPDATE tenant_operations SET status = ${status}, error = ${error}, finished_at = ${now}, updated_at = ${now}
    WHERE id = ${id} AND status IN ('pending', 'running')`;
  return getOperation(sql, id);
}

/** Page of a tenant's operations, newest first (page is 0-based, as everywhere in the management API). */
export function listOperations(sql: Sql, tenantId: string, q: OperationQuery): { operations: TenantOperation[]; total: number } {
  const where = ["tenant_id = ?"];
  const values: string[] = [tenantId];
  if (q.kind) {
    where.push("kind = ?");
    values.push(q.kind);
  }
  if (q.status) {
    where.push("status = ?");
    values.push(q.status);
  }
  const clause = where.join(" AND ");
  const rows = sql.exec<OperationRow>(
    `SELECT * FROM tenant_operations WHERE ${clause} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
    ...values,
    q.per_page,
    q.page * q.per_page,
  );
  const total = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM tenant_operations WHERE ${clause}`, ...values)[0]?.n ?? 0;
  return { operations: rows.map(toOperation), total };
}

/** provisioning_state with its timestamp and error (SPEC §3.1). */
export function setProvisioningState(
  sql: Sql,
  tenantId: string,
  state: Tenant["provisioning_state"],
  error: string | null,
  now: number,
): Tenant | null {
  sql.run`UPDATE tenants SET provisioning_state = ${state}, provisioning_error = ${error},
      provisioning_state_changed_at = CASE WHEN provisioning_state = ${state} THEN provisioning_state_changed_at ELSE ${now} END,
      updated_at = ${now}
    WHERE id = ${tenantId}`;
  return getTenant(sql, tenantId);
}

/** Moves the tenant's pin (only after the new release verified, issue 16 point 6). */
export function movePin(
  sql: Sql,
  tenantId: string,
  pin: { worker_version: string; bundle_configuration: string; worker_script_name: string; d1_database_id?: string | null },
  now: number,
): Tenant | null {
  sql.run`UPDATE tenants SET worker_version = ${pin.worker_version}, bundle_configuration = ${pin.bundle_configuration},
      worker_script_name = ${pin.worker_script_name}, d1_database_id = COALESCE(${pin.d1_database_id ?? null}, d1_database_id),
      updated_at = ${now}
    WHERE id = ${tenantId}`;
  return getTenant(sql, tenantId);
}

/** The journal facade (`stub.operations(audit, logTenantId)`). */
export class Operations extends PlatformRpc {
  get(id: string, withEvents = true): TenantOperation | null {
    return this.read((sql) => getOperation(sql, id, withEvents));
  }

  list(tenantId: string, q: OperationQuery): { operations: TenantOperation[]; total: number } {
    return this.read((sql) => listOperations(sql, tenantId, q));
  }

  /** Pending or running operations whose journal has not moved for `idleMs` (their executor may have died). */
  stale(idleMs: number): TenantOperation[] {
    return this.read((sql, now) =>
      sql.all<OperationRow>`SELECT * FROM tenant_operations WHERE status IN ('pending', 'running') AND updated_at < ${now - idleMs}
        ORDER BY created_at LIMIT 20`.map(toOperation),
    );
  }

  /** Marks an operation as seen by the resumer (so the next sweep waits `idleMs` again). */
  touch(id: string): void {
    this.commit((sql, now) => sql.run`UPDATE tenant_operations SET updated_at = ${now} WHERE id = ${id}`);
  }

  active(tenantId: string): TenantOperation | null {
    return this.read((sql) => activeOperation(sql, tenantId));
  }

  /** Opens an operation and, for a (re)provisioning, puts the tenant back to `pending` in the same commit. */
  open(input: NewOperation, options: { markPending?: boolean } = {}): Result<TenantOperation> {
    return this.auditedWrite(
      (tx) => {
        const opened = openOperation(tx.sql, input, tx.now);
        if (opened.ok && options.markPending) setProvisioningState(tx.sql, input.tenant_id, "pending", null, tx.now);
        return opened;
      },
      { entity: "tenant_operation", action: "created", id: (op) => op.id, after: (op) => op },
    );
  }

  /**
   * Opens a tenant deletion (issue 15 point 4) and journals its plan (what the steps need once the tenant's
   * row is gone: the tenant and its domains' provider references) in the same commit.
   */
  openDeletion(tenantId: string, plan: { [key: string]: Json }, requestedBy: string | null): Result<TenantOperation> {
    return this.auditedWrite(
      (tx) => {
        const opened = openOperation(tx.sql, { tenant_id: tenantId, kind: "delete", requested_by: requestedBy }, tx.now);
        if (opened.ok) recordStep(tx.sql, opened.value.id, { step: "plan", status: "succeeded", detail: plan }, tx.now);
        return opened;
      },
      { entity: "tenant_operation", action: "created", id: (op) => op.id, after: (op) => op },
    );
  }

  start(id: string, instanceId: string | null): TenantOperation | null {
    return this.commit((sql, now) => startOperation(sql, id, instanceId, now));
  }

  step(id: string, event: StepEvent): TenantOperationEvent {
    return this.commit((sql, now) => recordStep(sql, id, event, now));
  }

  /**
   * Closes the operation and applies its outcome to the tenant in one commit: on success the pin moves (when
   * given) and a provisioning tenant becomes `ready`; on failure the pin stays and, when the operation was
   * provisioning the tenant, it becomes `failed` with the error (SPEC §3.1).
   */
  finish(
    id: string,
    outcome:
      | { status: "succeeded"; pin?: Parameters<typeof movePin>[2]; provisioning?: boolean }
      | { status: "failed"; error: string; provisioning?: boolean; route?: string },
  ): TenantOperation | null {
    return this.commit((sql, now) => {
      const op = getOperation(sql, id);
      if (!op) return null;
      if (op.status === "succeeded" || op.status === "failed") return op;
      if (outcome.status === "succeeded") {
        if (outcome.pin) movePin(sql, op.tenant_id, outcome.pin, now);
        if (outcome.provisioning) setProvisioningState(sql, op.tenant_id, "ready", null, now);
        return finishOperation(sql, id, "succeeded", null, now);
      }
      if (outcome.provisioning) setProvisioningState(sql, op.tenant_id, "failed", outcome.error, now);
      // A two-slot upgrade that failed after its switch: the pin stays, the route follows the slot holding the data.
      if (outcome.route) sql.run`UPDATE tenants SET worker_script_name = ${outcome.route}, updated_at = ${now} WHERE id = ${op.tenant_id}`;
      return finishOperation(sql, id, "failed", outcome.error, now);
    });
  }
}
