import { fail, ok, type Result } from "../../shared/errors";
import type { ListPage, ListWindow, Tenant, TenantInput, TenantPatch } from "../../shared/types";
import { iso, type Sql, type SqlValue } from "../sql";
import type { ManagementWrite, WriteTx } from "../tenant/core/events";
import { PlatformRpc } from "./rpc";

/** A stored tenant row: the API record with epoch-millisecond times, a nullable script name and the seed flag. */
type TenantRow = Omit<Tenant, "provisioning_state_changed_at" | "created_at" | "updated_at" | "worker_script_name"> & {
  provisioning_state_changed_at: number;
  created_at: number;
  updated_at: number;
  worker_script_name: string | null;
  is_seeded: number;
};

function toTenant(row: TenantRow): Tenant {
  const { is_seeded: _seeded, ...rest } = row;
  return {
    ...rest,
    worker_script_name: row.worker_script_name ?? `tenant-${row.id}-auth`,
    provisioning_state_changed_at: iso(row.provisioning_state_changed_at) as string,
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at) as string,
  };
}

export function getTenant(sql: Sql, id: string): Tenant | null {
  const row = sql.first<TenantRow>`SELECT * FROM tenants WHERE id = ${id}`;
  return row ? toTenant(row) : null;
}

export function isSeeded(sql: Sql, id: string): boolean {
  return sql.first<{ is_seeded: number }>`SELECT is_seeded FROM tenants WHERE id = ${id}`?.is_seeded === 1;
}

export function markSeeded(sql: Sql, id: string): void {
  sql.run`UPDATE tenants SET is_seeded = 1 WHERE id = ${id}`;
}

/** Inserts a tenant; an existing id is a 409. */
export function createTenant(sql: Sql, input: TenantInput, now: number): Result<Tenant> {
  if (sql.first`SELECT 1 FROM tenants WHERE id = ${input.id}`) {
    return fail("tenant_exists", { id: input.id });
  }
  // A wfp tenant starts `pending` (its copy is provisioned asynchronously, SPEC §3.1); shared is always `ready`.
  const state = input.deployment_type === "wfp" ? "pending" : "ready";
  sql.run`INSERT INTO tenants (id, name, friendly_name, audience, sender_name, sender_email, deployment_type,
      storage_kind, bundle_configuration, worker_version, worker_script_name, provisioning_state,
      provisioning_state_changed_at, created_at, updated_at)
    VALUES (${input.id}, ${input.name}, ${input.friendly_name ?? null}, ${input.audience ?? null},
      ${input.sender_name ?? null}, ${input.sender_email ?? null}, ${input.deployment_type ?? "shared"},
      ${input.storage_kind ?? "own_d1"}, ${input.bundle_configuration ?? "default"},
      ${input.worker_version ?? "current"}, ${input.worker_script_name ?? null}, ${state}, ${now}, ${now}, ${now})`;
  return ok(getTenant(sql, input.id) as Tenant);
}

/** Inserts the tenant only if absent (bootstrap); returns whether its seed already ran. */
export function ensureTenant(sql: Sql, input: TenantInput, now: number): { seeded: boolean } {
  sql.run`INSERT OR IGNORE INTO tenants (id, name, provisioning_state_changed_at, created_at, updated_at)
    VALUES (${input.id}, ${input.name}, ${now}, ${now}, ${now})`;
  return { seeded: isSeeded(sql, input.id) };
}

const PATCHABLE = [
  "name",
  "friendly_name",
  "audience",
  "sender_name",
  "sender_email",
  "storage_kind",
  "bundle_configuration",
  "worker_version",
] as const;

export function updateTenant(sql: Sql, id: string, patch: TenantPatch, now: number): Result<Tenant> {
  if (!getTenant(sql, id)) return fail("tenant_not_found");
  for (const field of PATCHABLE) {
    if (!(field in patch)) continue;
    // The column name comes from the fixed list above, never from input.
    sql.exec(`UPDATE tenants SET ${field} = ? WHERE id = ?`, patch[field] ?? null, id);
  }
  sql.run`UPDATE tenants SET updated_at = ${now} WHERE id = ${id}`;
  return ok(getTenant(sql, id) as Tenant);
}

export function deleteTenant(sql: Sql, id: string): boolean {
  // Its custom domains go with it (SPEC §2.2: a released name can be claimed again).
  sql.run`DELETE FROM custom_domains WHERE tenant_id = ${id}`;
  return sql.run`DELETE FROM tenants WHERE id = ${id}` > 0;
}

/** `name_filter` of GET /tenants: the id, name or display name contains the text, ignoring case. */
function nameWhere(nameFilter: string | undefined): { where: string[]; values: SqlValue[] } {
  if (!nameFilter) return { where: [], values: [] };
  return {
    where: ["(instr(lower(id), lower(?)) > 0 OR instr(lower(name), lower(?)) > 0 OR instr(lower(coalesce(friendly_name, '')), lower(?)) > 0)"],
    values: [nameFilter, nameFilter, nameFilter],
  };
}

/** Offset page of tenants, newest first, optionally filtered by name. */
export function listTenants(sql: Sql, offset: number, limit: number, nameFilter?: string): { items: Tenant[]; total: number } {
  const { where, values } = nameWhere(nameFilter);
  const filtered = where.length ? ` WHERE ${where.join(" AND ")}` : "";
  const rows = sql.exec<TenantRow>(`SELECT * FROM tenants${filtered} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, ...values, limit, offset);
  const total = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM tenants${filtered}`, ...values)[0]?.n ?? 0;
  return { items: rows.map(toTenant), total };
}

/** Keyset page for checkpoint pagination: rows strictly after (createdAt, id) in the given direction. */
export function listTenantsAfter(sql: Sql, after: { createdAt: number; id: string } | null, limit: number, nameFilter?: string): Tenant[] {
  const { where, values } = nameWhere(nameFilter);
  if (after) {
    where.push("(created_at, id) < (?, ?)");
    values.push(after.createdAt, after.id);
  }
  const filtered = where.length ? ` WHERE ${where.join(" AND ")}` : "";
  return sql.exec<TenantRow>(`SELECT * FROM tenants${filtered} ORDER BY created_at DESC, id DESC LIMIT ?`, ...values, limit).map(toTenant);
}

export function countTenants(sql: Sql): number {
  return sql.first<{ n: number }>`SELECT count(*) AS n FROM tenants`?.n ?? 0;
}

/** The tenants facade (`stub.tenants()`); existence checks and counts stay flat on the object (hot). */
export class Tenants extends PlatformRpc {
  get(id: string): Tenant | null {
    return this.read((sql) => getTenant(sql, id));
  }

  /** Idempotent bootstrap insert; tells the caller whether the tenant's seed still has to run. */
  ensure(input: TenantInput): { seeded: boolean } {
    return this.commit((sql, now) => ensureTenant(sql, input, now));
  }

  markSeeded(id: string): void {
    this.commit((sql) => markSeeded(sql, id));
  }

  create(input: TenantInput): Result<Tenant> {
    return this.tenantWrite((tx) => createTenant(tx.sql, input, tx.now), { entity: "tenant", action: "created", id: input.id, after: (t) => t });
  }

  update(id: string, patch: TenantPatch): Result<Tenant> {
    const before = this.read((sql) => getTenant(sql, id));
    return this.tenantWrite((tx) => updateTenant(tx.sql, id, patch, tx.now), { entity: "tenant", action: "updated", id, before, after: (t) => t });
  }

  delete(id: string): boolean {
    const before = this.read((sql) => getTenant(sql, id));
    const result = this.tenantWrite((tx) => (deleteTenant(tx.sql, id) ? ok(true as const) : fail("tenant_not_found")), { entity: "tenant", action: "deleted", id, before });
    return result.ok;
  }

  private tenantWrite<T>(fn: (tx: WriteTx) => Result<T>, write: ManagementWrite<T>): Result<T> {
    return this.auditedWrite(fn, write);
  }

  /** wfp tenants, oldest first (bulk upgrades go in creation order). */
  listWfp(): { id: string; worker_version: string; bundle_configuration: string }[] {
    return this.read((sql) =>
      sql.all<{ id: string; worker_version: string; bundle_configuration: string }>`
        SELECT id, worker_version, bundle_configuration FROM tenants WHERE deployment_type = 'wfp' ORDER BY created_at, id`,
    );
  }

  /** Newest first, in the same windows as every other management list (SPEC §4.3). */
  list(window: ListWindow, nameFilter?: string): ListPage<Tenant> {
    return this.read((sql) =>
      "offset" in window
        ? listTenants(sql, window.offset, window.limit, nameFilter)
        : { items: listTenantsAfter(sql, window.after, window.limit, nameFilter), total: null },
    );
  }
}
