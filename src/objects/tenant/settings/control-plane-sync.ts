/**
 * `sync` of control-plane inheritance (SPEC "Control-plane inheritance"; issue 15 point 2): the control
 * plane's management API scopes and its roles are kept in step in every child tenant. After such a write the
 * worker asks the control plane to record an `internal.control_plane_sync` outbox event (a second call, not
 * the write's own transaction: a crash between the two leaves the pass to the next change); its relay reads
 * the control plane's current state at delivery time and applies it to each child. Applying is idempotent
 * (the child's state is made equal to the control plane's), so the relay's retries finish a pass that
 * failed half-way without doing anything twice.
 */
import { OPERATOR_ROLES } from "../../../shared/console";
import { ok } from "../../../shared/errors";
import { randomId } from "../../../shared/crypto/random";
import type { PermissionRef } from "../../../shared/schemas/roles";
import type { AuditContext, Json } from "../../../shared/types";
import type { Sql } from "../../sql";
import { bumpConfigVersion, getSetting, putSetting } from "../core/settings";
import { audited, type WriteTx } from "../core/events";
import { checkPermissions, prunePermissions } from "../oauth/permissions";
import { type Destination, internalDestination } from "../core/relay";
import { toResourceServer } from "../oauth/rows";
import { TenantRpc } from "../core/rpc";

export const CONTROL_PLANE_SYNC = "internal.control_plane_sync";

/** What a sync pass carries over: the management API's scopes, the roles, or both. */
export interface SyncKinds {
  resource_servers: boolean;
  roles: boolean;
}

/** A role as the control plane has it (matched in children by name). */
export interface SyncedRole {
  /** The control-plane role's id: a child remembers which of its roles mirrors it (renames follow). */
  source_id: string;
  name: string;
  description: string | null;
  permissions: PermissionRef[];
}

/** The control plane's state a child is made equal to. */
export interface SyncState {
  managementScopes?: { value: string; description: string }[];
  roles?: SyncedRole[];
}

/** The `_settings` key mapping control-plane role ids to the child roles sync made (deleted when the control plane drops them). */
const SYNCED_ROLES = "synced_roles";

/** The control plane's current state for the kinds asked. */
export function readSyncState(sql: Sql, kinds: SyncKinds): SyncState {
  const state: SyncState = {};
  if (kinds.resource_servers) {
    const row = sql.first<Record<string, unknown>>`SELECT * FROM resource_servers WHERE is_system = 1`;
    if (row) state.managementScopes = toResourceServer(row).scopes.map((s) => ({ value: s.value, description: s.description ?? s.value }));
  }
  if (kinds.roles) {
    // The console's operator roles (issue 30) govern the control plane itself: no child inherits them.
    const operatorRoles = new Set<string>(OPERATOR_ROLES.map((r) => r.name));
    const roles = sql
      .all<{ id: string; name: string; description: string | null }>`SELECT id, name, description FROM roles ORDER BY name`
      .filter((role) => !operatorRoles.has(role.name));
    state.roles = roles.map((role) => ({
      source_id: role.id,
      name: role.name,
      description: role.description,
      permissions: sql.all<PermissionRef>`SELECT resource_server_identifier, permission_name FROM role_permissions
        WHERE role_id = ${role.id} ORDER BY resource_server_identifier, permission_name`,
    }));
  }
  return state;
}

function applyScopes(tx: WriteTx, audit: AuditContext, scopes: NonNullable<SyncState["managementScopes"]>): boolean {
  const row = tx.sql.first<Record<string, unknown>>`SELECT * FROM resource_servers WHERE is_system = 1`;
  if (!row) return false;
  const before = toResourceServer(row);
  const next = JSON.stringify(scopes);
  if (JSON.stringify(before.scopes.map((s) => ({ value: s.value, description: s.description ?? s.value }))) === next) return false;
  tx.sql.run`UPDATE resource_servers SET scopes = ${next}, updated_at = ${tx.now} WHERE id = ${before.id}`;
  prunePermissions(tx.sql, before.identifier, new Set(scopes.map((s) => s.value)));
  audited(tx, audit, ok({ scopes }), { entity: "resource_server", action: "updated", id: before.id, before: { scopes: before.scopes }, after: (x) => x });
  return true;
}

/** The permissions of a role the child can hold: those of APIs it has and that define the scope. */
const holdable = (sql: Sql, refs: readonly PermissionRef[]) => refs.filter((ref) => checkPermissions(sql, [ref]).ok);

/** A child role found for a control-plane role: by the id recorded at an earlier pass, else by name. */
function childRoleOf(sql: Sql, role: SyncedRole, known: Record<string, string>) {
  const byId = known[role.source_id];
  const row = byId ? sql.first<{ id: string; name: string; description: string | null }>`SELECT id, name, description FROM roles WHERE id = ${byId}` : undefined;
  return row ?? sql.first<{ id: string; name: string; description: string | null }>`SELECT id, name, description FROM roles WHERE name = ${role.name}`;
}

function applyRole(tx: WriteTx, audit: AuditContext, role: SyncedRole, known: Record<string, string>): { id: string; changed: boolean } {
  const existing = childRoleOf(tx.sql, role, known);
  const id = existing?.id ?? randomId("rol_");
  // A rename follows unless another role of the child already has the name (the child's own role wins).
  const nameFree = !tx.sql.first`SELECT 1 FROM roles WHERE name = ${role.name} AND id != ${id}`;
  const name = nameFree ? role.name : (existing?.name ?? role.name);
  let changed = false;
  if (!existing) {
    if (!nameFree) return { id: "", changed: false };
    tx.sql.run`INSERT INTO roles (id, name, description, created_at, updated_at) VALUES (${id}, ${name}, ${role.description}, ${tx.now}, ${tx.now})`;
    changed = true;
  } else if (existing.description !== role.description || existing.name !== name) {
    tx.sql.run`UPDATE roles SET name = ${name}, description = ${role.description}, updated_at = ${tx.now} WHERE id = ${id}`;
    changed = true;
  }
  const key = (p: PermissionRef) => `${p.resource_server_identifier}\n${p.permission_name}`;
  const wanted = new Map(holdable(tx.sql, role.permissions).map((p) => [key(p), p]));
  const held = tx.sql.all<PermissionRef>`SELECT resource_server_identifier, permission_name FROM role_permissions WHERE role_id = ${id}`;
  for (const p of held) {
    if (wanted.delete(key(p))) continue;
    tx.sql.run`DELETE FROM role_permissions WHERE role_id = ${id} AND resource_server_identifier = ${p.resource_server_identifier} AND permission_name = ${p.permission_name}`;
    changed = true;
  }
  for (const p of wanted.values()) {
    tx.sql.run`INSERT INTO role_permissions (role_id, resource_server_identifier, permission_name, created_at)
      VALUES (${id}, ${p.resource_server_identifier}, ${p.permission_name}, ${tx.now})`;
    changed = true;
  }
  if (changed) {
    audited(tx, audit, ok({ id, name, description: role.description, permissions: role.permissions }), {
      entity: "role",
      action: existing ? "updated" : "created",
      id,
      ...(existing ? { before: existing } : {}),
      after: (x) => x,
    });
  }
  return { id, changed };
}

function applyRoles(tx: WriteTx, audit: AuditContext, roles: readonly SyncedRole[]): boolean {
  const known = getSetting<Record<string, string>>(tx.sql, SYNCED_ROLES, {});
  const next: Record<string, string> = {};
  let changed = false;
  for (const role of roles) {
    const applied = applyRole(tx, audit, role, known);
    if (applied.id) next[role.source_id] = applied.id;
    changed = applied.changed || changed;
  }
  // Roles the control plane no longer has go from the child too (only those sync made).
  for (const [sourceId, childId] of Object.entries(known)) {
    if (sourceId in next || !tx.sql.first`SELECT 1 FROM roles WHERE id = ${childId}`) continue;
    tx.sql.run`DELETE FROM role_permissions WHERE role_id = ${childId}`;
    tx.sql.run`DELETE FROM user_roles WHERE role_id = ${childId}`;
    tx.sql.run`DELETE FROM roles WHERE id = ${childId}`;
    audited(tx, audit, ok(true), { entity: "role", action: "deleted", id: childId });
    changed = true;
  }
  putSetting(tx.sql, SYNCED_ROLES, next);
  return changed;
}

/** Makes a child equal to the control plane's state; returns what changed (nothing on a repeated pass). */
export function applySyncState(tx: WriteTx, audit: AuditContext, state: SyncState): string[] {
  const changed: string[] = [];
  if (state.managementScopes && applyScopes(tx, audit, state.managementScopes)) changed.push("resource_servers");
  if (state.roles && applyRoles(tx, audit, state.roles)) changed.push("roles");
  // The management API's scopes are configuration (the worker's snapshot must refetch).
  if (changed.includes("resource_servers")) bumpConfigVersion(tx.sql);
  return changed;
}

/** How the control plane's relay reaches its children (bindings live in the object's environment). */
export interface SyncTargets {
  children(): Promise<string[]>;
  apply(childTenantId: string, state: SyncState): Promise<unknown>;
}

/**
 * The relay destination of the control plane: one pass applies its current state to every child; any
 * failure fails the event, which the relay retries (children already in step change nothing).
 */
export function controlPlaneSyncDestination(sql: Sql, targets: SyncTargets): Destination {
  return internalDestination<SyncKinds>({
    name: "control_plane_sync",
    eventType: CONTROL_PLANE_SYNC,
    timeoutMs: 30_000,
    async deliver(kinds) {
      const state = readSyncState(sql, kinds);
      const children = await targets.children();
      const results = await Promise.allSettled(children.map((child) => targets.apply(child, state)));
      const failures = results.flatMap((r, i) => (r.status === "rejected" ? [`${children[i]}: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`] : []));
      if (failures.length) throw new Error(`sync failed for ${failures.join("; ")}`);
    },
  });
}

/** `stub.controlPlaneSync()`: request a pass (on the control plane), or apply one (on a child). */
export class ControlPlaneSync extends TenantRpc {
  /** Records a sync pass in the outbox (delivered by this object's relay). */
  request(kinds: SyncKinds): void {
    this.commit((tx) => {
      tx.emit({ event_type: CONTROL_PLANE_SYNC, payload: { ...kinds } as Record<string, Json>, lane: "network" });
    });
  }

  /** Applies the control plane's state to this (child) tenant in one transaction. */
  apply(state: SyncState): string[] {
    return this.commit((tx) => applySyncState(tx, this.audit, state));
  }
}
