import { fail, ok, type Result } from "../../../shared/errors";
import type { ClientCredentialRecord, ClientRecord, NewClient, NewClientCredential } from "../../../shared/schemas/clients";
import { iso, json, type Sql } from "../../sql";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";
import { createClient, getClient } from "./clients";

type Row = Record<string, unknown>;

/** A client holds at most this many credentials (the reference platform allows two per client and type). */
export const MAX_CREDENTIALS_PER_CLIENT = 10;

function toCredential(r: Row): ClientCredentialRecord {
  return {
    id: String(r.id),
    client_id: String(r.client_id),
    name: r.name === null ? null : String(r.name),
    credential_type: "public_key",
    kid: String(r.kid),
    alg: String(r.alg) as ClientCredentialRecord["alg"],
    public_jwk: json(String(r.public_jwk), {}),
    created_at: iso(r.created_at as number) as string,
    updated_at: iso(r.updated_at as number) as string,
    expires_at: iso((r.expires_at as number | null) ?? null),
  };
}

export function listClientCredentials(sql: Sql, clientId: string): Result<ClientCredentialRecord[]> {
  if (!getClient(sql, clientId)) return fail("inexistent_client");
  return ok(sql.all<Row>`SELECT * FROM client_credentials WHERE client_id = ${clientId} ORDER BY created_at, id`.map(toCredential));
}

export function getClientCredential(sql: Sql, clientId: string, id: string): Result<ClientCredentialRecord> {
  if (!getClient(sql, clientId)) return fail("inexistent_client");
  const row = sql.first<Row>`SELECT * FROM client_credentials WHERE id = ${id} AND client_id = ${clientId}`;
  return row ? ok(toCredential(row)) : fail("inexistent_client_credential");
}

export function createClientCredential(sql: Sql, credential: NewClientCredential, now: number): Result<ClientCredentialRecord> {
  if (!getClient(sql, credential.client_id)) return fail("inexistent_client");
  const held = sql.first<{ n: number }>`SELECT count(*) AS n FROM client_credentials WHERE client_id = ${credential.client_id}`?.n ?? 0;
  if (held >= MAX_CREDENTIALS_PER_CLIENT) return fail("client_credentials_limit", { max: MAX_CREDENTIALS_PER_CLIENT });
  if (sql.first`SELECT 1 FROM client_credentials WHERE client_id = ${credential.client_id} AND kid = ${credential.kid}`) {
    return fail("client_credential_conflict");
  }
  const c = credential;
  sql.run`INSERT INTO client_credentials (id, client_id, name, credential_type, kid, alg, public_jwk, created_at, updated_at, expires_at)
    VALUES (${c.id}, ${c.client_id}, ${c.name}, ${c.credential_type}, ${c.kid}, ${c.alg}, ${c.public_jwk}, ${now}, ${now}, ${c.expires_at})`;
  return getClientCredential(sql, c.client_id, c.id);
}

/**
 * The public keys that verify a client's private_key_jwt assertions now: its credentials not yet expired, only
 * those named in `ids` when the client lists them (`client_authentication_methods.private_key_jwt`).
 */
export function activeCredentialKeys(sql: Sql, clientId: string, now: number, ids?: string[]): Record<string, string>[] {
  return sql
    .all<{ id: string; public_jwk: string }>`SELECT id, public_jwk FROM client_credentials WHERE client_id = ${clientId} AND (expires_at IS NULL OR expires_at > ${now})`
    .filter((r) => !ids || ids.includes(r.id))
    .map((r) => json(r.public_jwk, {}));
}

/** The client-credentials facade (`stub.clientCredentials(audit)`). */
export class ClientCredentials extends TenantRpc {
  list(clientId: string): Result<ClientCredentialRecord[]> {
    return this.read((sql) => listClientCredentials(sql, clientId));
  }

  get(clientId: string, id: string): Result<ClientCredentialRecord> {
    return this.read((sql) => getClientCredential(sql, clientId, id));
  }

  activeKeys(clientId: string, ids?: string[]): Record<string, string>[] {
    return this.read((sql, now) => activeCredentialKeys(sql, clientId, now, ids));
  }

  /**
   * A new client with its first credentials in one transaction (POST /clients with client_authentication_methods):
   * the worker checked the credentials beforehand, so a failure here after the client row is a fault, thrown to
   * roll the client back.
   */
  createClient(credentials: NewClientCredential[], client: NewClient): Result<ClientRecord> {
    return this.commit(
      (tx) => {
        const created = createClient(tx.sql, client, tx.now);
        for (const credential of created.ok ? credentials : []) {
          const stored = createClientCredential(tx.sql, credential, tx.now);
          if (!stored.ok) throw new Error(`credential ${credential.id} of a new client: ${stored.error.code}`);
          audited(tx, this.audit, stored, { entity: "client_credential", action: "created", id: credential.id, after: (c) => c });
        }
        return audited(tx, this.audit, created, { entity: "client", action: "created", id: client.client_id, after: (c) => c });
      },
      { config: true },
    );
  }

  create(credential: NewClientCredential): Result<ClientCredentialRecord> {
    return this.commit((tx) =>
      audited(tx, this.audit, createClientCredential(tx.sql, credential, tx.now), { entity: "client_credential", action: "created", id: credential.id, after: (c) => c }),
    );
  }

  setExpiry(clientId: string, id: string, expiresAt: number | null): Result<ClientCredentialRecord> {
    return this.commit((tx) => {
      const before = getClientCredential(tx.sql, clientId, id);
      if (!before.ok) return audited(tx, this.audit, before, { entity: "client_credential", action: "updated", id });
      tx.sql.run`UPDATE client_credentials SET expires_at = ${expiresAt}, updated_at = ${tx.now} WHERE id = ${id}`;
      return audited(tx, this.audit, getClientCredential(tx.sql, clientId, id), { entity: "client_credential", action: "updated", id, before: before.value, after: (c) => c });
    });
  }

  delete(clientId: string, id: string): Result<true> {
    return this.commit((tx) => {
      const before = getClientCredential(tx.sql, clientId, id);
      if (before.ok) tx.sql.run`DELETE FROM client_credentials WHERE id = ${id}`;
      const result: Result<true> = before.ok ? ok(true) : before;
      return audited(tx, this.audit, result, { entity: "client_credential", action: "deleted", id, before: before.ok ? before.value : undefined });
    });
  }
}
