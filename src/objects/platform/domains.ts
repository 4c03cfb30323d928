import { fail, ok, type Result } from "../../shared/errors";
import { randomId } from "../../shared/crypto/random";
import type { HostResolution } from "../../shared/types";
import { iso, type Sql } from "../sql";
import { PlatformRpc } from "./rpc";

export interface CustomDomain {
  id: string;
  tenant_id: string;
  domain: string;
  type: string;
  created_at: string;
  updated_at: string;
}

/** Resolves a lowercased host to the tenant that claimed it as a custom domain (exact match, SPEC §5.5). */
export function resolveCustomDomain(sql: Sql, host: string): HostResolution | null {
  const row = sql.first<{ tenant_id: string; domain: string }>`
    SELECT tenant_id, domain FROM custom_domains WHERE domain = ${host}`;
  return row ? { tenantId: row.tenant_id, customDomain: row.domain } : null;
}

/** Registers a custom domain; a domain can be claimed by only one tenant (SPEC §2.2). */
export function addCustomDomain(
  sql: Sql,
  input: { tenant_id: string; domain: string; type: string },
  now: number,
): Result<CustomDomain> {
  const domain = input.domain.trim().toLowerCase();
  if (!sql.first`SELECT 1 FROM tenants WHERE id = ${input.tenant_id}`) return fail("tenant_not_found");
  if (sql.first`SELECT 1 FROM custom_domains WHERE domain = ${domain}`) {
    return fail("domain_conflict", { domain });
  }
  const id = randomId("cd_");
  sql.run`INSERT INTO custom_domains (id, tenant_id, domain, type, created_at, updated_at)
    VALUES (${id}, ${input.tenant_id}, ${domain}, ${input.type}, ${now}, ${now})`;
  return ok({ id, tenant_id: input.tenant_id, domain, type: input.type, created_at: iso(now), updated_at: iso(now) } as CustomDomain);
}

export function listCustomDomains(sql: Sql, tenantId: string): CustomDomain[] {
  return sql
    .all<{ id: string; tenant_id: string; domain: string; type: string; created_at: number; updated_at: number }>`
      SELECT * FROM custom_domains WHERE tenant_id = ${tenantId} ORDER BY domain`
    .map((r) => ({ ...r, created_at: iso(r.created_at) as string, updated_at: iso(r.updated_at) as string }));
}

/** The custom-domains facade (`stub.domains()`); host resolution stays flat on the object (hot). */
export class Domains extends PlatformRpc {
  add(input: { tenant_id: string; domain: string; type: string }): Result<CustomDomain> {
    return this.commit((sql, now) => addCustomDomain(sql, input, now));
  }

  list(tenantId: string): CustomDomain[] {
    return this.read((sql) => listCustomDomains(sql, tenantId));
  }
}
