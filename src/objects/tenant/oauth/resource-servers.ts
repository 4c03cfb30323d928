import { fail, ok, type Result } from "../../../shared/errors";
import type { ListPage, ListWindow, NewResourceServer, ResourceServerPatch } from "../../../shared/types";
import type { ResourceServerRecord } from "../../../shared/schemas/resource-servers";
import { json, type Sql } from "../../sql";
import { listRows } from "../core/listing";
import { definedOnly, toResourceServer } from "./rows";
import { audited } from "../core/events";
import { prunePermissions } from "./permissions";
import { TenantRpc } from "../core/rpc";

const notFound = () => fail("inexistent_resource_server");

export function getResourceServer(sql: Sql, id: string): ResourceServerRecord | null {
  const row = sql.first<Record<string, unknown>>`SELECT * FROM resource_servers WHERE id = ${id}`;
  return row ? toResourceServer(row) : null;
}

export function findResourceServer(sql: Sql, identifier: string): ResourceServerRecord | null {
  const row = sql.first<Record<string, unknown>>`SELECT * FROM resource_servers WHERE identifier = ${identifier}`;
  return row ? toResourceServer(row) : null;
}

export function listResourceServers(sql: Sql, window: ListWindow): ListPage<ResourceServerRecord> {
  const { rows, total } = listRows(sql, "resource_servers", window);
  return { items: rows.map(toResourceServer), total };
}

export function createResourceServer(sql: Sql, api: NewResourceServer, now: number): Result<ResourceServerRecord> {
  if (findResourceServer(sql, api.identifier)) {
    return fail("resource_server_conflict", { identifier: api.identifier });
  }
  sql.run`INSERT INTO resource_servers (id, identifier, name, scopes, signing_alg, token_lifetime, allow_offline_access,
      enforce_policies, token_dialect, created_at, updated_at)
    VALUES (${api.id}, ${api.identifier}, ${api.name}, ${api.scopes}, ${api.signing_alg}, ${api.token_lifetime},
      ${api.allow_offline_access}, ${api.enforce_policies}, ${api.token_dialect}, ${now}, ${now})`;
  if (api.signing_secret_enc) sql.run`UPDATE resource_servers SET signing_secret_enc = ${api.signing_secret_enc} WHERE id = ${api.id}`;
  if (api.proof_of_possession) sql.run`UPDATE resource_servers SET proof_of_possession = ${JSON.stringify(api.proof_of_possession)} WHERE id = ${api.id}`;
  return ok(getResourceServer(sql, api.id) as ResourceServerRecord);
}

const canonical = (key: string, value: unknown) =>
  JSON.stringify(key === "scopes" && Array.isArray(value) ? [...value].sort((a, b) => String(a.value).localeCompare(String(b.value))) : value);

/** Whether every field the patch names already has that value (a generated secret counts as a change). */
function changesNothing(current: ResourceServerRecord, patch: ResourceServerPatch): boolean {
  if (patch.signing_secret_enc !== undefined) return false;
  const { signing_secret_enc_if_missing: _generated, ...fields } = definedOnly(patch) as ResourceServerPatch;
  return Object.entries(fields).every(([key, value]) => canonical(key, (current as unknown as Record<string, unknown>)[key]) === canonical(key, value));
}

/**
 * Updates a resource server. When scopes are removed, client grants for this API lose them too, so that a
 * grant never holds a scope its API does not define (the rule POST /client-grants enforces), and so do the
 * roles and users holding them as permissions (a permission exists only while its API defines it).
 */
export function updateResourceServer(sql: Sql, id: string, patch: ResourceServerPatch, now: number): Result<ResourceServerRecord> {
  const current = getResourceServer(sql, id);
  if (!current) return notFound();
  if (current.is_system) {
    // A tool sending back what it read (auth0-deploy-cli's import, issue 28 point 6) changes nothing: that
    // succeeds without a write; any real change to the system API stays refused.
    return changesNothing(current, patch) ? ok(current) : fail("system_api_immutable");
  }
  const next = { ...current, ...definedOnly(patch) };
  sql.run`UPDATE resource_servers SET name = ${next.name}, scopes = ${next.scopes}, signing_alg = ${next.signing_alg},
      token_lifetime = ${next.token_lifetime}, allow_offline_access = ${next.allow_offline_access},
      enforce_policies = ${next.enforce_policies}, token_dialect = ${next.token_dialect}, updated_at = ${now}
    WHERE id = ${id}`;
  if (patch.proof_of_possession !== undefined) {
    const pop = patch.proof_of_possession === null ? null : JSON.stringify(patch.proof_of_possession);
    sql.run`UPDATE resource_servers SET proof_of_possession = ${pop} WHERE id = ${id}`;
  }
  if (patch.signing_secret_enc) sql.run`UPDATE resource_servers SET signing_secret_enc = ${patch.signing_secret_enc} WHERE id = ${id}`;
  else if (patch.signing_secret_enc_if_missing) {
    sql.run`UPDATE resource_servers SET signing_secret_enc = ${patch.signing_secret_enc_if_missing} WHERE id = ${id} AND signing_secret_enc IS NULL`;
  }
  if (patch.scopes) {
    const defined = new Set(patch.scopes.map((s) => s.value));
    pruneGrantScopes(sql, current.identifier, defined, now);
    prunePermissions(sql, current.identifier, defined);
  }
  return ok(getResourceServer(sql, id) as ResourceServerRecord);
}

function pruneGrantScopes(sql: Sql, audience: string, defined: Set<string>, now: number): void {
  for (const grant of sql.all<{ id: string; scope: string }>`SELECT id, scope FROM client_grants WHERE audience = ${audience}`) {
    const scope = json<string[]>(grant.scope, []);
    const kept = scope.filter((s) => defined.has(s));
    if (kept.length !== scope.length) sql.run`UPDATE client_grants SET scope = ${kept}, updated_at = ${now} WHERE id = ${grant.id}`;
  }
}

/** Deletes a resource server, every client grant for its audience and every permission it defined. */
export function deleteResourceServer(sql: Sql, id: string): Result<true> {
  const current = getResourceServer(sql, id);
  if (!current) return notFound();
  if (current.is_system) return fail("system_api_undeletable");
  sql.run`DELETE FROM client_grants WHERE audience = ${current.identifier}`;
  prunePermissions(sql, current.identifier, new Set());
  sql.run`DELETE FROM resource_servers WHERE id = ${id}`;
  return ok(true);
}

/** The resource-servers (APIs) facade (`stub.resourceServers()`): configuration. */
export class ResourceServers extends TenantRpc {
  list(window: ListWindow): ListPage<ResourceServerRecord> {
    return this.read((sql) => listResourceServers(sql, window));
  }

  get(id: string): ResourceServerRecord | null {
    return this.read((sql) => getResourceServer(sql, id));
  }

  create(api: NewResourceServer): Result<ResourceServerRecord> {
    return this.commit((tx) => audited(tx, this.audit, createResourceServer(tx.sql, api, tx.now), { entity: "resource_server", action: "created", id: api.id, after: (r) => r }), { config: true });
  }

  update(id: string, patch: ResourceServerPatch): Result<ResourceServerRecord> {
    return this.commit((tx) => {
      const before = getResourceServer(tx.sql, id);
      return audited(tx, this.audit, updateResourceServer(tx.sql, id, patch, tx.now), { entity: "resource_server", action: "updated", id, before, after: (r) => r });
    }, { config: true });
  }

  delete(id: string): Result<true> {
    return this.commit((tx) => {
      const before = getResourceServer(tx.sql, id);
      return audited(tx, this.audit, deleteResourceServer(tx.sql, id), { entity: "resource_server", action: "deleted", id, before });
    }, { config: true });
  }
}
