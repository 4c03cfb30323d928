import { fail, ok, type Result } from "../../../shared/errors";
import { luceneToSql } from "../../../shared/lucene";
import { ORGANIZATION_SORTS, ORGANIZATIONS_SEARCH } from "../../../shared/schemas/organizations";
import type { Json, ListPage, LoginOrganization } from "../../../shared/types";
import type { NewOrganization, OrganizationConnectionRecord, OrganizationConnectionSettings, OrganizationPatch, OrganizationRecord } from "../../../shared/schemas/organizations";
import { iso, json, type Sql, type SqlValue } from "../../sql";

/**
 * Organizations and their enabled connections (SPEC §2.6, §4.2 "Organizations"). Members and invitations
 * live in organization-members.ts and organization-invitations.ts; the facade is organizations-rpc.ts.
 */

type Row = Record<string, unknown>;
const time = (v: unknown) => iso(v as number) as string;

export function toOrganization(r: Row): OrganizationRecord {
  const branding = json<OrganizationRecord["branding"] | null>(r.branding as string | null, null);
  const quota = json<Record<string, Json> | null>(r.token_quota as string | null, null);
  return {
    id: String(r.id),
    name: String(r.name),
    ...(r.display_name === null || r.display_name === undefined ? {} : { display_name: String(r.display_name) }),
    ...(branding ? { branding } : {}),
    metadata: json(r.metadata as string, {}),
    ...(quota ? { token_quota: quota } : {}),
    created_at: time(r.created_at),
    updated_at: time(r.updated_at),
  };
}

export function getOrganization(sql: Sql, id: string): OrganizationRecord | null {
  const row = sql.first<Row>`SELECT * FROM organizations WHERE id = ${id}`;
  return row ? toOrganization(row) : null;
}

export function getOrganizationByName(sql: Sql, name: string): OrganizationRecord | null {
  const row = sql.first<Row>`SELECT * FROM organizations WHERE name = ${name}`;
  return row ? toOrganization(row) : null;
}

/** An organization by id, else by name (the `organization` parameter of /authorize and the grants). */
export function findOrganization(sql: Sql, idOrName: string): OrganizationRecord | null {
  return getOrganization(sql, idOrName) ?? getOrganizationByName(sql, idOrName.toLowerCase());
}

const notFound = () => fail("inexistent_organization");

const isNameTaken = (sql: Sql, name: string, except: string | null = null) =>
  Boolean(sql.first`SELECT 1 FROM organizations WHERE name = ${name} AND id IS NOT ${except}`);

/** Creates an organization with its initial connections (each must exist). */
export function createOrganization(
  sql: Sql,
  org: NewOrganization,
  now: number,
): Result<OrganizationRecord & { enabled_connections?: OrganizationConnectionRecord[] }> {
  if (isNameTaken(sql, org.name)) return fail("organization_conflict", { name: org.name });
  const ids = org.enabled_connections.map((c) => c.connection_id);
  if (new Set(ids).size !== ids.length) return fail("organization_connection_conflict");
  for (const id of ids) if (!sql.first`SELECT 1 FROM connections WHERE id = ${id}`) return fail("inexistent_connection");
  sql.run`INSERT INTO organizations (id, name, display_name, branding, metadata, token_quota, created_at, updated_at)
    VALUES (${org.id}, ${org.name}, ${org.display_name ?? null}, ${org.branding ?? null}, ${org.metadata}, ${org.token_quota ?? null},
      ${now}, ${now})`;
  for (const connection of org.enabled_connections) insertConnection(sql, org.id, connection, now);
  const created = getOrganization(sql, org.id) as OrganizationRecord;
  if (!org.enabled_connections.length) return ok(created);
  return ok({ ...created, enabled_connections: listOrganizationConnections(sql, org.id, { offset: 0, limit: 100 }).items });
}

/** Replaces the given fields; metadata is merged key by key (a null value removes the key). */
export function updateOrganization(sql: Sql, id: string, patch: OrganizationPatch, now: number): Result<OrganizationRecord> {
  const current = getOrganization(sql, id);
  if (!current) return notFound();
  if (patch.name !== undefined && isNameTaken(sql, patch.name, id)) return fail("organization_conflict", { name: patch.name });
  const metadata: Record<string, string> = { ...current.metadata };
  for (const [key, value] of Object.entries(patch.metadata ?? {})) {
    if (value === null) delete metadata[key];
    else metadata[key] = value;
  }
  const pick = <T>(given: T | null | undefined, kept: T | undefined): T | null => (given === undefined ? (kept ?? null) : given);
  sql.run`UPDATE organizations SET name = ${patch.name ?? current.name},
      display_name = ${pick(patch.display_name, current.display_name)}, branding = ${pick(patch.branding, current.branding)},
      metadata = ${metadata}, token_quota = ${pick(patch.token_quota, current.token_quota)}, updated_at = ${now}
    WHERE id = ${id}`;
  return ok(getOrganization(sql, id) as OrganizationRecord);
}

/** Deletes an organization with its members (and their roles), invitations and connection links. */
export function deleteOrganization(sql: Sql, id: string): Result<true> {
  if (!getOrganization(sql, id)) return notFound();
  // The foreign keys cascade too; the explicit deletes keep the rule visible and independent of them.
  sql.run`DELETE FROM organization_member_roles WHERE organization_id = ${id}`;
  sql.run`DELETE FROM organization_members WHERE organization_id = ${id}`;
  sql.run`DELETE FROM organization_invitations WHERE organization_id = ${id}`;
  sql.run`DELETE FROM organization_connections WHERE organization_id = ${id}`;
  sql.run`DELETE FROM organizations WHERE id = ${id}`;
  return ok(true);
}

/** A page of GET /organizations: offset (sorted, with total) or checkpoint (created_at, id descending). */
export type OrganizationWindow =
  | { offset: number; limit: number; sort: string }
  | { after: { createdAt: number; id: string } | null; limit: number };

/** Lists organizations filtered by `q` (validated by the worker); every value is bound. */
export function listOrganizations(sql: Sql, q: string | undefined, window: OrganizationWindow): ListPage<OrganizationRecord> {
  const where: string[] = [];
  const values: SqlValue[] = [];
  const search = luceneToSql(q, ORGANIZATIONS_SEARCH);
  if (search) {
    where.push(search.where);
    values.push(...search.params);
  }
  const clause = () => (where.length ? ` WHERE ${where.join(" AND ")}` : "");
  if ("offset" in window) {
    const sort = ORGANIZATION_SORTS[window.sort] ?? { column: "created_at", descending: true };
    const direction = sort.descending ? "DESC" : "ASC";
    const order = ` ORDER BY ${sort.column} ${direction}, id ${direction} LIMIT ? OFFSET ?`;
    const rows = sql.exec<Row>(`SELECT * FROM organizations${clause()}${order}`, ...values, window.limit, window.offset);
    const total = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM organizations${clause()}`, ...values)[0]?.n ?? 0;
    return { items: rows.map(toOrganization), total };
  }
  if (window.after) {
    where.push("(created_at, id) < (?, ?)");
    values.push(window.after.createdAt, window.after.id);
  }
  const rows = sql.exec<Row>(`SELECT * FROM organizations${clause()} ORDER BY created_at DESC, id DESC LIMIT ?`, ...values, window.limit);
  return { items: rows.map(toOrganization), total: null };
}

// Enabled connections ------------------------------------------------------------------------------------

function toConnectionLink(r: Row): OrganizationConnectionRecord {
  return {
    connection_id: String(r.connection_id),
    assign_membership_on_login: r.assign_membership_on_login === 1,
    show_as_button: r.show_as_button === 1,
    is_signup_enabled: r.is_signup_enabled === 1,
    connection: { name: String(r.name), strategy: String(r.strategy) },
    created_at: time(r.created_at),
  };
}

function insertConnection(sql: Sql, orgId: string, c: { connection_id: string } & Partial<OrganizationConnectionSettings>, now: number) {
  sql.run`INSERT INTO organization_connections (organization_id, connection_id, assign_membership_on_login, show_as_button,
      is_signup_enabled, created_at)
    VALUES (${orgId}, ${c.connection_id}, ${c.assign_membership_on_login ?? false}, ${c.show_as_button ?? true},
      ${c.is_signup_enabled ?? false}, ${now})`;
}

export function getOrganizationConnection(sql: Sql, orgId: string, connectionId: string): OrganizationConnectionRecord | null {
  const row = sql.first<Row>`SELECT oc.*, c.name, c.strategy FROM organization_connections oc
    JOIN connections c ON c.id = oc.connection_id WHERE oc.organization_id = ${orgId} AND oc.connection_id = ${connectionId}`;
  return row ? toConnectionLink(row) : null;
}

/** The organization's enabled connections, in the order they were enabled. */
export function listOrganizationConnections(sql: Sql, orgId: string, window: { offset: number; limit: number }) {
  const rows = sql.all<Row>`SELECT oc.*, c.name, c.strategy FROM organization_connections oc
    JOIN connections c ON c.id = oc.connection_id WHERE oc.organization_id = ${orgId}
    ORDER BY oc.created_at, oc.connection_id LIMIT ${window.limit} OFFSET ${window.offset}`;
  const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM organization_connections WHERE organization_id = ${orgId}`?.n ?? 0;
  return { items: rows.map(toConnectionLink), total };
}

export function addOrganizationConnection(
  sql: Sql,
  orgId: string,
  input: { connection_id: string } & Partial<OrganizationConnectionSettings>,
  now: number,
): Result<OrganizationConnectionRecord> {
  if (!getOrganization(sql, orgId)) return notFound();
  if (!sql.first`SELECT 1 FROM connections WHERE id = ${input.connection_id}`) return fail("inexistent_connection");
  if (getOrganizationConnection(sql, orgId, input.connection_id)) return fail("organization_connection_conflict");
  insertConnection(sql, orgId, input, now);
  return ok(getOrganizationConnection(sql, orgId, input.connection_id) as OrganizationConnectionRecord);
}

export function updateOrganizationConnection(
  sql: Sql,
  orgId: string,
  connectionId: string,
  patch: Partial<OrganizationConnectionSettings>,
): Result<OrganizationConnectionRecord> {
  if (!getOrganization(sql, orgId)) return notFound();
  const current = getOrganizationConnection(sql, orgId, connectionId);
  if (!current) return fail("inexistent_organization_connection");
  const next = { ...current, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) };
  sql.run`UPDATE organization_connections SET assign_membership_on_login = ${next.assign_membership_on_login},
      show_as_button = ${next.show_as_button}, is_signup_enabled = ${next.is_signup_enabled}
    WHERE organization_id = ${orgId} AND connection_id = ${connectionId}`;
  return ok(getOrganizationConnection(sql, orgId, connectionId) as OrganizationConnectionRecord);
}

export function removeOrganizationConnection(sql: Sql, orgId: string, connectionId: string): Result<true> {
  if (!getOrganization(sql, orgId)) return notFound();
  const removed = sql.run`DELETE FROM organization_connections WHERE organization_id = ${orgId} AND connection_id = ${connectionId}`;
  return removed ? ok(true) : fail("inexistent_organization_connection");
}

/** The organization a login names (id or name) with its enabled connections, or null. */
export function loginOrganization(sql: Sql, idOrName: string): LoginOrganization | null {
  const org = findOrganization(sql, idOrName);
  if (!org) return null;
  const connections = listOrganizationConnections(sql, org.id, { offset: 0, limit: 1000 }).items.map((c) => ({
    connection_id: c.connection_id,
    name: c.connection.name,
    assign_membership_on_login: c.assign_membership_on_login,
    show_as_button: c.show_as_button,
    is_signup_enabled: c.is_signup_enabled,
  }));
  return {
    id: org.id,
    name: org.name,
    ...(org.display_name ? { display_name: org.display_name } : {}),
    ...(org.branding ? { branding: org.branding } : {}),
    connections,
  };
}
