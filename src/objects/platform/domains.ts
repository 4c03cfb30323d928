import { fail, ok, type Result } from "../../shared/errors";
import { randomId } from "../../shared/crypto/random";
import type { CustomDomainInput, CustomDomainPatch, CustomDomainRecord, HostnameState, HostResolution } from "../../shared/types";
import { iso, json, type Sql } from "../sql";
import { PlatformRpc } from "./rpc";

interface DomainRow {
  id: string;
  tenant_id: string;
  domain: string;
  type: string;
  status: CustomDomainRecord["status"];
  verification: string | null;
  certificate: string | null;
  origin_domain_name: string | null;
  custom_client_ip_header: string | null;
  tls_policy: string | null;
  domain_metadata: string | null;
  relying_party_identifier: string | null;
  provider_ref: string | null;
  is_default: number;
  created_at: number;
  updated_at: number;
}

/** The tenant's primary domain is its first (the reference platform's `primary`). */
function primaryId(sql: Sql, tenantId: string): string | null {
  return (
    sql.first<{ id: string }>`SELECT id FROM custom_domains WHERE tenant_id = ${tenantId}
      ORDER BY created_at, id LIMIT 1`?.id ?? null
  );
}

function toRecord(row: DomainRow, primary: string | null): CustomDomainRecord {
  const record: CustomDomainRecord = {
    custom_domain_id: row.id,
    tenant_id: row.tenant_id,
    domain: row.domain,
    primary: row.id === primary,
    is_default: row.is_default === 1,
    status: row.status,
    type: row.type as CustomDomainRecord["type"],
    verification: json(row.verification, { methods: [] }),
    custom_client_ip_header: row.custom_client_ip_header,
    tls_policy: row.tls_policy ?? "recommended",
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at) as string,
  };
  if (row.origin_domain_name) record.origin_domain_name = row.origin_domain_name;
  if (row.certificate) record.certificate = json(row.certificate, {});
  if (row.domain_metadata) record.domain_metadata = json(row.domain_metadata, {});
  if (row.relying_party_identifier) record.relying_party_identifier = row.relying_party_identifier;
  return record;
}

/**
 * Resolves a lowercased host to the tenant that claimed it as a custom domain (exact match, SPEC §5.5 step
 * 4). Only a `ready` domain routes: a pending one has proven nothing yet.
 */
export function resolveCustomDomain(sql: Sql, host: string): HostResolution | null {
  const row = sql.first<{ tenant_id: string; domain: string }>`
    SELECT tenant_id, domain FROM custom_domains WHERE lower(domain) = ${host.toLowerCase()} AND status = 'ready'`;
  return row ? { tenantId: row.tenant_id, customDomain: row.domain } : null;
}

export function getCustomDomain(sql: Sql, id: string): CustomDomainRecord | null {
  const row = sql.first<DomainRow>`SELECT * FROM custom_domains WHERE id = ${id}`;
  return row ? toRecord(row, primaryId(sql, row.tenant_id)) : null;
}

/** The provider's handle of a domain (never shown by the API). */
export function providerRef(sql: Sql, id: string): string | null {
  return sql.first<{ provider_ref: string | null }>`SELECT provider_ref FROM custom_domains WHERE id = ${id}`?.provider_ref ?? null;
}

/** Which tenant holds a domain, if any (case-insensitive). */
export function domainClaim(sql: Sql, domain: string): { id: string; tenant_id: string } | null {
  return (sql.first<{ id: string; tenant_id: string }>`
    SELECT id, tenant_id FROM custom_domains WHERE lower(domain) = ${domain.toLowerCase()}`) ?? null;
}

/**
 * Registers a custom domain with what the certificate provider reported; a domain can be claimed by only one
 * tenant (SPEC §2.2; case-insensitive). `id` is given when mirroring the control plane's record.
 */
export function addCustomDomain(
  sql: Sql,
  input: CustomDomainInput,
  state: HostnameState,
  now: number,
  id: string = randomId("cd_"),
): Result<CustomDomainRecord> {
  const domain = input.domain.trim().toLowerCase();
  if (!sql.first`SELECT 1 FROM tenants WHERE id = ${input.tenant_id}`) return fail("tenant_not_found");
  if (domainClaim(sql, domain)) return fail("domain_conflict", { domain });
  sql.run`INSERT INTO custom_domains (id, tenant_id, domain, type, status, verification, certificate,
      origin_domain_name, custom_client_ip_header, tls_policy, domain_metadata, relying_party_identifier,
      provider_ref, created_at, updated_at)
    VALUES (${id}, ${input.tenant_id}, ${domain}, ${input.type}, ${state.status}, ${JSON.stringify(state.verification)},
      ${state.certificate ? JSON.stringify(state.certificate) : null}, ${state.origin_domain_name ?? null},
      ${input.custom_client_ip_header ?? null}, ${input.tls_policy ?? "recommended"},
      ${input.domain_metadata ? JSON.stringify(input.domain_metadata) : null}, ${input.relying_party_identifier ?? null},
      ${state.providerRef}, ${now}, ${now})`;
  return ok(getCustomDomain(sql, id) as CustomDomainRecord);
}

/** Records the provider's latest view of a domain (verification). */
export function recordHostnameState(sql: Sql, id: string, state: HostnameState, now: number): Result<CustomDomainRecord> {
  if (!sql.first`SELECT 1 FROM custom_domains WHERE id = ${id}`) return fail("inexistent_custom_domain");
  sql.run`UPDATE custom_domains SET status = ${state.status}, verification = ${JSON.stringify(state.verification)},
      certificate = ${state.certificate ? JSON.stringify(state.certificate) : null},
      origin_domain_name = ${state.origin_domain_name ?? null}, provider_ref = ${state.providerRef}, updated_at = ${now}
    WHERE id = ${id}`;
  return ok(getCustomDomain(sql, id) as CustomDomainRecord);
}

export function updateCustomDomain(sql: Sql, id: string, patch: CustomDomainPatch, now: number): Result<CustomDomainRecord> {
  const current = sql.first<DomainRow>`SELECT * FROM custom_domains WHERE id = ${id}`;
  if (!current) return fail("inexistent_custom_domain");
  const next = {
    custom_client_ip_header: "custom_client_ip_header" in patch ? (patch.custom_client_ip_header ?? null) : current.custom_client_ip_header,
    tls_policy: patch.tls_policy ?? current.tls_policy,
    domain_metadata: patch.domain_metadata
      ? JSON.stringify(mergeMetadata(json(current.domain_metadata, {}), patch.domain_metadata))
      : current.domain_metadata,
    relying_party_identifier:
      "relying_party_identifier" in patch ? (patch.relying_party_identifier ?? null) : current.relying_party_identifier,
  };
  sql.run`UPDATE custom_domains SET custom_client_ip_header = ${next.custom_client_ip_header}, tls_policy = ${next.tls_policy},
      domain_metadata = ${next.domain_metadata}, relying_party_identifier = ${next.relying_party_identifier}, updated_at = ${now}
    WHERE id = ${id}`;
  return ok(getCustomDomain(sql, id) as CustomDomainRecord);
}

/** The reference platform merges `domain_metadata`; a null value removes a key. */
function mergeMetadata(current: Record<string, string>, patch: Record<string, string | null>): Record<string, string> {
  const out = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

export function deleteCustomDomain(sql: Sql, id: string): Result<true> {
  return sql.run`DELETE FROM custom_domains WHERE id = ${id}` > 0 ? ok(true as const) : fail("inexistent_custom_domain");
}

/** A tenant's domains, ordered by domain (the reference platform's only sort, `domain:1`). */
export function listCustomDomains(sql: Sql, tenantId: string): CustomDomainRecord[] {
  const primary = primaryId(sql, tenantId);
  return sql.all<DomainRow>`SELECT * FROM custom_domains WHERE tenant_id = ${tenantId} ORDER BY domain`.map((r) => toRecord(r, primary));
}

/**
 * The custom-domains facade (`stub.domains(audit, logTenantId)`); host resolution stays flat on the object
 * (hot). Writes record `custom_domain.*` audit events in the acting tenant's logs.
 */
export class Domains extends PlatformRpc {
  get(id: string): CustomDomainRecord | null {
    return this.read((sql) => getCustomDomain(sql, id));
  }

  list(tenantId: string): CustomDomainRecord[] {
    return this.read((sql) => listCustomDomains(sql, tenantId));
  }

  /** Who holds a domain (pre-check before the provider is called; the insert checks again). */
  claim(domain: string): { id: string; tenant_id: string } | null {
    return this.read((sql) => domainClaim(sql, domain));
  }

  providerRef(id: string): string | null {
    return this.read((sql) => providerRef(sql, id));
  }

  add(input: CustomDomainInput, state: HostnameState, id?: string): Result<CustomDomainRecord> {
    return this.auditedWrite((tx) => addCustomDomain(tx.sql, input, state, tx.now, id), {
      entity: "custom_domain",
      action: "created",
      id: (d) => d.custom_domain_id,
      after: (d) => d,
    });
  }

  /** A mirror of the control plane's record on a tenant deployment: the same id, replaced if present. */
  mirror(record: CustomDomainRecord): Result<CustomDomainRecord> {
    return this.commit((sql, now) => {
      sql.run`DELETE FROM custom_domains WHERE id = ${record.custom_domain_id} OR lower(domain) = ${record.domain.toLowerCase()}`;
      const state: HostnameState = {
        providerRef: `control-plane:${record.custom_domain_id}`,
        status: record.status,
        verification: record.verification ?? { methods: [] },
        ...(record.certificate ? { certificate: record.certificate } : {}),
        ...(record.origin_domain_name ? { origin_domain_name: record.origin_domain_name } : {}),
      };
      return addCustomDomain(sql, record, state, now, record.custom_domain_id);
    });
  }

  recordState(id: string, state: HostnameState): Result<CustomDomainRecord> {
    const before = this.get(id);
    return this.auditedWrite((tx) => recordHostnameState(tx.sql, id, state, tx.now), {
      entity: "custom_domain",
      action: "updated",
      id,
      before,
      after: (d) => d,
    });
  }

  update(id: string, patch: CustomDomainPatch): Result<CustomDomainRecord> {
    const before = this.get(id);
    return this.auditedWrite((tx) => updateCustomDomain(tx.sql, id, patch, tx.now), {
      entity: "custom_domain",
      action: "updated",
      id,
      before,
      after: (d) => d,
    });
  }

  delete(id: string): Result<true> {
    const before = this.get(id);
    return this.auditedWrite((tx) => deleteCustomDomain(tx.sql, id), { entity: "custom_domain", action: "deleted", id, before });
  }

  /** The tenant's default custom domain, or null (its canonical domain is the default). */
  defaultOf(tenantId: string): CustomDomainRecord | null {
    return this.read((sql) => {
      const row = sql.first<DomainRow>`SELECT * FROM custom_domains WHERE tenant_id = ${tenantId} AND is_default = 1`;
      return row ? toRecord(row, primaryId(sql, tenantId)) : null;
    });
  }

  /**
   * Makes a ready custom domain of the tenant its default, or (null) returns the default to the canonical
   * domain; one default per tenant. A domain that is not the tenant's is `inexistent_custom_domain`, one not
   * yet verified `custom_domain_not_verified`.
   */
  setDefault(tenantId: string, id: string | null): Result<CustomDomainRecord | null> {
    const before = this.read((sql) => sql.first<{ id: string }>`SELECT id FROM custom_domains WHERE tenant_id = ${tenantId} AND is_default = 1`?.id ?? null);
    return this.auditedWrite(
      (tx) => {
        const target = id ? getCustomDomain(tx.sql, id) : null;
        if (id && (!target || target.tenant_id !== tenantId)) return fail("inexistent_custom_domain");
        if (target && target.status !== "ready") return fail("custom_domain_not_verified", { domain: target.domain });
        tx.sql.run`UPDATE custom_domains SET is_default = 0, updated_at = ${tx.now} WHERE tenant_id = ${tenantId} AND is_default = 1`;
        if (!id) return ok(null);
        tx.sql.run`UPDATE custom_domains SET is_default = 1, updated_at = ${tx.now} WHERE id = ${id}`;
        return ok(getCustomDomain(tx.sql, id));
      },
      { entity: "custom_domain", action: "updated", id: id ?? before ?? tenantId, after: (d) => ({ default_custom_domain_id: d?.custom_domain_id ?? null }) },
    );
  }

  /** Removes a mirrored record without an audit event (the control plane recorded the write). */
  forget(id: string): void {
    this.commit((sql) => sql.run`DELETE FROM custom_domains WHERE id = ${id}`);
  }
}
