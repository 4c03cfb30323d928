import { fail, ok, type Result } from "../../../shared/errors";
import type { ClientGrantRecord } from "../../../shared/schemas/client-grants";
import type { OrganizationRecord } from "../../../shared/schemas/organizations";
import type { ListPage } from "../../../shared/types";
import type { Sql } from "../../sql";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";
import { getClientGrant } from "../oauth/client-grants";
import { toClientGrant } from "../oauth/rows";
import { getOrganization, toOrganization } from "./organizations";

type Row = Record<string, unknown>;

/** Filters of GET /organizations/{id}/client-grants (the reference platform's). */
export interface OrganizationGrantFilter {
  audience?: string;
  client_id?: string;
  grant_ids?: string[];
}

/**
 * The client grants associated with an organization, oldest association first. The reference platform
 * associates only grants whose `organization_usage` is `allow` or `require`.
 */
export function listOrganizationClientGrants(
  sql: Sql,
  organizationId: string,
  filter: OrganizationGrantFilter,
  window: { offset: number; limit: number },
): Result<ListPage<ClientGrantRecord>> {
  if (!getOrganization(sql, organizationId)) return fail("inexistent_organization");
  const where = ["o.organization_id = ?"];
  const values: (string | number)[] = [organizationId];
  if (filter.audience) {
    where.push("g.audience = ?");
    values.push(filter.audience);
  }
  if (filter.client_id) {
    where.push("g.client_id = ?");
    values.push(filter.client_id);
  }
  if (filter.grant_ids?.length) {
    where.push(`g.id IN (${filter.grant_ids.map(() => "?").join(",")})`);
    values.push(...filter.grant_ids);
  }
  const from = `FROM organization_client_grants o JOIN client_grants g ON g.id = o.grant_id WHERE ${where.join(" AND ")}`;
  const rows = sql.exec<Row>(`SELECT g.* ${from} ORDER BY o.created_at, g.id LIMIT ? OFFSET ?`, ...values, window.limit, window.offset);
  const total = sql.exec<{ n: number }>(`SELECT count(*) AS n ${from}`, ...values)[0]?.n ?? 0;
  return ok({ items: rows.map(toClientGrant), total });
}

export function associateClientGrant(sql: Sql, organizationId: string, grantId: string, now: number): Result<ClientGrantRecord> {
  if (!getOrganization(sql, organizationId)) return fail("inexistent_organization");
  const grant = getClientGrant(sql, grantId);
  if (!grant) return fail("inexistent_client_grant");
  if (grant.organization_usage !== "allow" && grant.organization_usage !== "require") return fail("client_grant_organization_usage");
  if (sql.first`SELECT 1 FROM organization_client_grants WHERE organization_id = ${organizationId} AND grant_id = ${grantId}`) {
    return fail("organization_client_grant_conflict");
  }
  sql.run`INSERT INTO organization_client_grants (organization_id, grant_id, created_at) VALUES (${organizationId}, ${grantId}, ${now})`;
  return ok(grant);
}

export function dissociateClientGrant(sql: Sql, organizationId: string, grantId: string): Result<true> {
  if (!getOrganization(sql, organizationId)) return fail("inexistent_organization");
  const removed = sql.run`DELETE FROM organization_client_grants WHERE organization_id = ${organizationId} AND grant_id = ${grantId}`;
  if (!removed) return fail("inexistent_organization_client_grant");
  return ok(true);
}

/** The organizations a grant is associated with, checkpoint-paged by (association time, organization id). */
export function organizationsOfGrant(
  sql: Sql,
  grantId: string,
  window: { after: { createdAt: number; id: string } | null; limit: number } | { offset: number; limit: number },
): Result<ListPage<OrganizationRecord & { associated_at: number }>> {
  if (!getClientGrant(sql, grantId)) return fail("inexistent_client_grant");
  const select = "SELECT org.*, o.created_at AS associated_at FROM organization_client_grants o JOIN organizations org ON org.id = o.organization_id WHERE o.grant_id = ?";
  const total = sql.exec<{ n: number }>("SELECT count(*) AS n FROM organization_client_grants WHERE grant_id = ?", grantId)[0]?.n ?? 0;
  const rows =
    "offset" in window
      ? sql.exec<Row>(`${select} ORDER BY o.created_at, org.id LIMIT ? OFFSET ?`, grantId, window.limit, window.offset)
      : window.after
        ? sql.exec<Row>(`${select} AND (o.created_at > ? OR (o.created_at = ? AND org.id > ?)) ORDER BY o.created_at, org.id LIMIT ?`, grantId, window.after.createdAt, window.after.createdAt, window.after.id, window.limit)
        : sql.exec<Row>(`${select} ORDER BY o.created_at, org.id LIMIT ?`, grantId, window.limit);
  return ok({ items: rows.map((r) => ({ ...toOrganization(r), associated_at: Number(r.associated_at) })), total });
}

/** The organization-client-grant facade (`stub.organizationClientGrants(audit)`). */
export class OrganizationClientGrants extends TenantRpc {
  list(organizationId: string, filter: OrganizationGrantFilter, window: { offset: number; limit: number }): Result<ListPage<ClientGrantRecord>> {
    return this.read((sql) => listOrganizationClientGrants(sql, organizationId, filter, window));
  }

  organizations(
    grantId: string,
    window: { after: { createdAt: number; id: string } | null; limit: number } | { offset: number; limit: number },
  ): Result<ListPage<OrganizationRecord & { associated_at: number }>> {
    return this.read((sql) => organizationsOfGrant(sql, grantId, window));
  }

  associate(organizationId: string, grantId: string): Result<ClientGrantRecord> {
    return this.commit((tx) =>
      audited(tx, this.audit, associateClientGrant(tx.sql, organizationId, grantId, tx.now), {
        entity: "organization_client_grant",
        action: "created",
        id: organizationId,
        after: () => ({ organization_id: organizationId, grant_id: grantId }),
      }),
    );
  }

  dissociate(organizationId: string, grantId: string): Result<true> {
    return this.commit((tx) =>
      audited(tx, this.audit, dissociateClientGrant(tx.sql, organizationId, grantId), {
        entity: "organization_client_grant",
        action: "deleted",
        id: organizationId,
        before: { organization_id: organizationId, grant_id: grantId },
      }),
    );
  }
}
