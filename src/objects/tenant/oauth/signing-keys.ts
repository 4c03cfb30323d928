/**
 * Signing-key rows of a tenant (SPEC §2.9, §4.2 "Signing keys"). Key pairs and certificates are made in the
 * worker (CPU work stays out of the object); here each change is one `commit` that also bumps the
 * configuration version, so every isolate's snapshot follows.
 */
import { fail, ok, type Result } from "../../../shared/errors";
import { DAY_MS, type KeyType, roleAt, signingKeyAt } from "../../../shared/key-ring";
import type { NewSigningKey, SigningKeyRecord } from "../../../shared/schemas/signing-keys";
import type { Sql } from "../../sql";
import { toSigningKey } from "./rows";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";

const notFound = () => fail("inexistent_signing_key");
const inheritedKey = () => fail("inherited_signing_key");

/** Every key of a bucket, newest first (revoked and expired included, as the reference platform lists them). */
export function listSigningKeys(sql: Sql, type: KeyType): SigningKeyRecord[] {
  return sql.all<Record<string, unknown>>`SELECT * FROM signing_keys WHERE type = ${type} ORDER BY created_at DESC`.map(toSigningKey);
}

export function getSigningKey(sql: Sql, type: KeyType, kid: string): SigningKeyRecord | null {
  const row = sql.first<Record<string, unknown>>`SELECT * FROM signing_keys WHERE type = ${type} AND kid = ${kid}`;
  return row ? toSigningKey(row) : null;
}

function insertKey(sql: Sql, key: NewSigningKey, activatesAt: number, now: number): void {
  sql.run`INSERT INTO signing_keys (kid, type, alg, public_jwk, private_jwk_enc, cert, is_current, activates_at, expires_at,
      created_at)
    VALUES (${key.kid}, ${key.type}, ${key.alg}, ${JSON.stringify(key.public_jwk)}, ${key.private_jwk_enc}, ${key.cert}, 0,
      ${activatesAt}, ${key.expires_at}, ${now})`;
}

/** Options of a rotation, already range-checked by the worker. */
export interface RotateOptions {
  activateInDays: number;
  graceDays: number;
}

/**
 * Adds the new keys (one per algorithm of the bucket), published now and signing after `activateInDays`.
 * Outgoing keys of the same algorithm stay published until `graceDays` after the new key activates — not
 * after the call (SPEC §4.2) — and stop signing at activation, which the key ring derives from the times.
 */
export function rotateSigningKeys(sql: Sql, keys: NewSigningKey[], options: RotateOptions, now: number): Result<SigningKeyRecord[]> {
  const activatesAt = now + options.activateInDays * DAY_MS;
  const retireAt = activatesAt + options.graceDays * DAY_MS;
  for (const key of keys) {
    sql.run`UPDATE signing_keys SET retire_at = MIN(COALESCE(retire_at, ${retireAt}), ${retireAt})
      WHERE type = ${key.type} AND alg = ${key.alg} AND revoked_at IS NULL AND inherited = 0`;
    insertKey(sql, key, activatesAt, now);
  }
  return ok(keys.map((k) => getSigningKey(sql, k.type, k.kid) as SigningKeyRecord));
}

/**
 * Revokes a key: unpublished at once, never signs again. The key that signs now can only go together with
 * its replacement (made by the worker, active at once), so the tenant is never left without a signer; a
 * replacement for any other key is refused (409) so that a concurrent change is not papered over.
 */
export function revokeSigningKey(
  sql: Sql,
  type: KeyType,
  kid: string,
  replacement: NewSigningKey | null,
  now: number,
): Result<{ revoked: SigningKeyRecord; replacement: SigningKeyRecord | null }> {
  const key = getSigningKey(sql, type, kid);
  if (!key) return notFound();
  if (key.inherited) return inheritedKey();
  if (key.revoked_at !== null) return fail("signing_key_revoked");
  const signsNow = roleAt(listSigningKeys(sql, type), key, now).current;
  if (signsNow !== (replacement !== null)) {
    return fail("signing_key_conflict");
  }
  if (replacement) insertKey(sql, replacement, now, now);
  sql.run`UPDATE signing_keys SET revoked_at = ${now}, is_current = 0 WHERE kid = ${kid}`;
  if (Date.parse(key.activates_at) > now) restoreOutgoing(sql, key);
  return ok({
    revoked: getSigningKey(sql, type, kid) as SigningKeyRecord,
    replacement: replacement ? getSigningKey(sql, type, replacement.kid) : null,
  });
}

/**
 * A scheduled key was revoked before it activated: the keys its rotation set to retire, and that no other
 * unrevoked key succeeds, stay published and signing as if the rotation had not happened.
 */
function restoreOutgoing(sql: Sql, revoked: SigningKeyRecord): void {
  const activatesAt = Date.parse(revoked.activates_at);
  sql.run`UPDATE signing_keys SET retire_at = NULL
    WHERE type = ${revoked.type} AND alg = ${revoked.alg} AND revoked_at IS NULL AND retire_at >= ${activatesAt}
      AND NOT EXISTS (SELECT 1 FROM signing_keys s WHERE s.type = signing_keys.type AND s.alg = signing_keys.alg
        AND s.revoked_at IS NULL AND s.activates_at > signing_keys.activates_at)`;
}

/** Replaces a key's certificate (same kid, same key pair); a revoked key cannot be renewed. */
export function renewSigningKey(sql: Sql, type: KeyType, kid: string, cert: string, expiresAt: number): Result<SigningKeyRecord> {
  const key = getSigningKey(sql, type, kid);
  if (!key) return notFound();
  if (key.inherited) return inheritedKey();
  if (key.revoked_at !== null) return fail("signing_key_revoked");
  sql.run`UPDATE signing_keys SET cert = ${cert}, expires_at = ${expiresAt} WHERE kid = ${kid}`;
  return ok(getSigningKey(sql, type, kid) as SigningKeyRecord);
}

/** Whether a bucket has a key that signs at `now` (the seed adds one only when not). */
export function hasSigningKey(sql: Sql, type: KeyType, alg: string, now: number): boolean {
  return signingKeyAt(listSigningKeys(sql, type), now, type, alg) !== undefined;
}

/**
 * Adds a key for an algorithm the ring does not sign with yet (an API chose it); a no-op when a concurrent
 * request already added one, so the ring never holds two active keys of one algorithm by accident.
 */
export function addSigningKey(sql: Sql, key: NewSigningKey, now: number): Result<{ added: boolean }> {
  if (hasSigningKey(sql, key.type, key.alg, now)) return ok({ added: false });
  insertKey(sql, key, now, now);
  return ok({ added: true });
}

/**
 * Gives certificates to keys made before keys carried one (issue 14): each is set only where the key still
 * has none, so concurrent backfills from several isolates agree on the first certificate written.
 */
export function attachCertificates(sql: Sql, certificates: { kid: string; cert: string }[]): Result<string[]> {
  const attached = certificates.filter(({ kid, cert }) => sql.run`UPDATE signing_keys SET cert = ${cert} WHERE kid = ${kid} AND cert IS NULL` > 0);
  return ok(attached.map((c) => c.kid));
}

export { insertKey as insertSigningKey };

/** The signing-key facade of a tenant object (`stub.signingKeys().rotate(...)`). */
export class SigningKeys extends TenantRpc {
  list(type: KeyType): SigningKeyRecord[] {
    return this.read((sql) => listSigningKeys(sql, type));
  }

  // Every key write records its audit event (`signing_key.*`, never key material) in its transaction.

  rotate(keys: NewSigningKey[], options: RotateOptions): Result<SigningKeyRecord[]> {
    return this.commit(
      (tx) =>
        audited(tx, this.audit, rotateSigningKeys(tx.sql, keys, options, tx.now), {
          entity: "signing_key",
          action: "created",
          id: (created) => created.map((k) => k.kid).join(","),
        }),
      { config: true },
    );
  }

  revoke(type: KeyType, kid: string, replacement: NewSigningKey | null) {
    return this.commit(
      (tx) => audited(tx, this.audit, revokeSigningKey(tx.sql, type, kid, replacement, tx.now), { entity: "signing_key", action: "updated", id: kid, status: 201 }),
      { config: true },
    );
  }

  renew(type: KeyType, kid: string, cert: string, expiresAt: number): Result<SigningKeyRecord> {
    return this.commit(
      (tx) => audited(tx, this.audit, renewSigningKey(tx.sql, type, kid, cert, expiresAt), { entity: "signing_key", action: "updated", id: kid, status: 201 }),
      { config: true },
    );
  }

  /** See {@link attachCertificates}; a system write (no caller), recorded as `signing_key.updated`. */
  attachCertificates(certificates: { kid: string; cert: string }[]): Result<string[]> {
    return this.commit(
      (tx) =>
        audited(tx, this.audit, attachCertificates(tx.sql, certificates), {
          entity: "signing_key",
          action: "updated",
          id: (kids) => kids.join(","),
        }),
      { config: true },
    );
  }

  add(key: NewSigningKey): Result<{ added: boolean }> {
    return this.commit(
      (tx) => audited(tx, this.audit, addSigningKey(tx.sql, key, tx.now), { entity: "signing_key", action: "created", id: key.kid }),
      { config: true },
    );
  }
}
