import { auditContext } from "../../http/audit";
/**
 * Signing keys of the management API (SPEC §4.2 "Signing keys", §2.9): buckets by `type`, rotation with
 * scheduled activation and grace, revocation, certificate renewal. Responses carry the certificate and the
 * key's role at this moment, never private material.
 */
import { z } from "zod";
import { now } from "../../../shared/clock";
import { certificateView } from "../../../shared/crypto/x509";
import { problem, unwrap } from "../../../shared/errors";
import { DEFAULT_GRACE_DAYS, DEFAULT_VALIDITY_DAYS, KEY_TYPES, type KeyType, publishedKeys, roleAt, signingKeyAt } from "../../../shared/key-ring";
import type { SigningKeyRecord } from "../../../shared/schemas/signing-keys";
import type { AppContext } from "../../context";
import { MAX_BODY_BYTES, readBodyText } from "../../http/body";
import { ensureCertificates } from "../../tenant/certificates";
import { generateSigningKey, renewCertificate } from "../../tenant/signing";
import { defineRoute } from "../define";
import { tenantConfig } from "../../tenant/config-cache";
import { parentLinkOf } from "../../tenant/inheritance";
import { targetTenant } from "../tenant-scoped";

const days = (max: number, min = 0) => z.number().int().min(min).max(max);

/** Lifecycle parameters (SPEC §4.2): validity 1-3650 days, activation delay and grace 0-365 days. */
const lifecycleBody = z
  .object({ validity_days: days(3650, 1), activate_in_days: days(365), grace_days: days(365) })
  .partial()
  .strict();
type LifecycleBody = z.infer<typeof lifecycleBody>;

/** Query parameters, documented here and checked by the handlers (400 on anything out of range). */
const TYPE_QUERY = z.looseObject({ type: z.string().optional().describe("jwt_signing (default) or saml_encryption") });
const LIFECYCLE_QUERY = TYPE_QUERY.extend({
  validity_days: z.string().optional().describe("1-3650 (default 365 for jwt_signing, 1825 for saml_encryption)"),
  activate_in_days: z.string().optional().describe("0-365 (default 0)"),
  grace_days: z.string().optional().describe("0-365 (default 1)"),
});

function keyType(c: AppContext): KeyType {
  const type = c.req.query("type") ?? "jwt_signing";
  if (!(KEY_TYPES as readonly string[]).includes(type)) {
    throw problem("invalid_query_string", { detail: `type must be one of ${KEY_TYPES.join(", ")}` });
  }
  return type as KeyType;
}

/**
 * The lifecycle parameters from the JSON body and/or the query string (the SDK's rotate sends no body).
 * Anything out of range or unknown is 400, never a default silently applied.
 */
async function lifecycleParams(c: AppContext): Promise<LifecycleBody> {
  const text = await readBodyText(c.req.raw, () => problem("payload_too_large", { bytes: MAX_BODY_BYTES }));
  let body: unknown = {};
  if (text.trim()) {
    try {
      body = JSON.parse(text);
    } catch {
      throw problem("body_not_json", { detail: "not valid JSON" });
    }
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw problem("invalid_body", { detail: "Request body must be an object" });
  const merged: Record<string, unknown> = { ...body };
  for (const name of ["validity_days", "activate_in_days", "grace_days"] as const) {
    const value = c.req.query(name);
    if (value === undefined) continue;
    if (!/^-?\d+$/.test(value)) throw problem("invalid_query_string", { detail: `${name} must be an integer` });
    merged[name] = Number(value);
  }
  const parsed = lifecycleBody.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw problem("invalid_body", { detail: `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}` });
  }
  return parsed.data;
}

/** The reference platform's shape plus `alg`: public certificate forms and the role at `now`. */
export async function presentKey(keys: readonly SigningKeyRecord[], key: SigningKeyRecord, now: number) {
  const role = roleAt(keys, key, now);
  const view = key.cert ? await certificateView(key.cert) : null;
  // The key stops being current when the next key of its algorithm activates (grace only keeps it published).
  const successor = keys
    .filter((k) => k.type === key.type && k.alg === key.alg && k.revoked_at === null && k.activates_at > key.activates_at)
    .sort((a, b) => Date.parse(a.activates_at) - Date.parse(b.activates_at))[0];
  return {
    kid: key.kid,
    alg: key.alg,
    cert: view?.cert ?? null,
    pkcs7: view?.pkcs7 ?? null,
    fingerprint: view?.fingerprint ?? null,
    thumbprint: view?.thumbprint ?? null,
    current: role.current,
    next: role.next,
    previous: role.previous,
    current_since: key.activates_at,
    ...(successor ? { current_until: successor.activates_at } : {}),
    revoked: role.revoked,
    ...(key.revoked_at ? { revoked_at: key.revoked_at } : {}),
    expires_at: key.expires_at,
    expired: role.expired,
    inherited: key.inherited,
  };
}

/**
 * The control plane's keys the target tenant inherits (issue 15 point 2), from the merged snapshot; empty
 * unless key inheritance is on and the tenant has a parent. Roles are computed within this set.
 */
async function inheritedKeys(c: AppContext, type: KeyType): Promise<SigningKeyRecord[]> {
  if (!c.var.settings.inheritSigningKeys) return [];
  const link = await parentLinkOf(c.var.settings, c.var.tenant.id);
  if (!link) return [];
  await ensureCertificates(c.env, c.var.settings, link.tenantId);
  const config = await tenantConfig(c.var.tenant.id, targetTenant(c), c.var.settings);
  return config.signingKeys
    .filter((k) => k.inherited && k.type === type)
    .sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at));
}

/** A key of the tenant's own, else one it inherits; `keys` is the set its role is computed in. */
async function findKey(c: AppContext, type: KeyType, kid: string) {
  const own = await targetTenant(c).signingKeys().list(type);
  const key = own.find((k) => k.kid === kid);
  if (key) return { keys: own, key };
  const inherited = await inheritedKeys(c, type);
  const parentKey = inherited.find((k) => k.kid === kid);
  if (!parentKey) throw problem("inexistent_signing_key");
  return { keys: inherited, key: parentKey };
}

/** Inherited keys belong to the parent tenant: read-only here (SPEC §4.2). */
function assertOwned(key: SigningKeyRecord): void {
  if (key.inherited) throw problem("inherited_signing_key");
}

/**
 * Makes sure the ring holds a key that signs with `alg` now (an API just chose it as its `signing_alg`):
 * generated in the worker, encrypted like every key, added unless a concurrent request already did.
 */
export async function ensureSigningKey(c: AppContext, alg: string): Promise<void> {
  const keys = await targetTenant(c).signingKeys().list("jwt_signing");
  if (signingKeyAt(keys, now(), "jwt_signing", alg)) return;
  const key = await generateSigningKey(c.env.ENCRYPTION_KEY, { alg, commonName: c.var.tenant.id });
  unwrap(await targetTenant(c).signingKeys(auditContext(c)).add(key));
}

export const signingKeyRoutes = [
  defineRoute({
    method: "get",
    path: "/keys/signing",
    scope: "read:signing_keys",
    summary: "List the signing keys of a bucket (revoked and expired included), newest first",
    query: TYPE_QUERY,
    status: 200,
    async handler(c) {
      await ensureCertificates(c.env, c.var.settings, c.var.tenant.id);
      const type = keyType(c);
      const keys = await targetTenant(c).signingKeys().list(type);
      const inherited = await inheritedKeys(c, type);
      const at = now();
      return c.json([
        ...(await Promise.all(keys.map((k) => presentKey(keys, k, at)))),
        ...(await Promise.all(inherited.map((k) => presentKey(inherited, k, at)))),
      ]);
    },
  }),
  defineRoute({
    method: "get",
    path: "/keys/signing/{kid}",
    scope: "read:signing_keys",
    summary: "Get one signing key",
    query: TYPE_QUERY,
    status: 200,
    async handler(c, { params }) {
      await ensureCertificates(c.env, c.var.settings, c.var.tenant.id);
      const { keys, key } = await findKey(c, keyType(c), params.kid ?? "");
      return c.json(await presentKey(keys, key, now()));
    },
  }),
  defineRoute({
    method: "post",
    path: "/keys/signing/rotate",
    invalidatesConfig: true,
    scope: "create:signing_keys",
    summary: "New key pair and certificate per algorithm of the bucket: published now, signing after activate_in_days",
    query: LIFECYCLE_QUERY,
    status: 201,
    async handler(c) {
      const type = keyType(c);
      const params = await lifecycleParams(c);
      const at = now();
      const existing = await targetTenant(c).signingKeys().list(type);
      const algs = [...new Set(publishedKeys(existing, at, type).map((k) => k.alg))];
      if (!algs.includes("RS256")) algs.unshift("RS256");
      const validityDays = params.validity_days ?? DEFAULT_VALIDITY_DAYS[type];
      const fresh = await Promise.all(
        algs.map((alg) => generateSigningKey(c.env.ENCRYPTION_KEY, { type, alg, commonName: c.var.tenant.id, validityDays, now: at })),
      );
      const created = unwrap(
        await targetTenant(c).signingKeys(auditContext(c)).rotate(fresh, {
          activateInDays: params.activate_in_days ?? 0,
          graceDays: params.grace_days ?? DEFAULT_GRACE_DAYS,
        }),
      );
      const main = created.find((k) => k.alg === "RS256") ?? created[0];
      return c.json({ cert: main?.cert, kid: main?.kid }, 201);
    },
  }),
  defineRoute({
    method: "put",
    path: "/keys/signing/{kid}/revoke",
    invalidatesConfig: true,
    scope: "update:signing_keys",
    summary: "Revoke a key (unpublished at once); revoking the key that signs now puts a new key in its place",
    query: LIFECYCLE_QUERY,
    status: 201,
    async handler(c, { params: path }) {
      const type = keyType(c);
      const params = await lifecycleParams(c);
      const { keys, key } = await findKey(c, type, path.kid ?? "");
      assertOwned(key);
      if (key.revoked_at) throw problem("signing_key_revoked");
      const at = now();
      const replacement = roleAt(keys, key, at).current
        ? await generateSigningKey(c.env.ENCRYPTION_KEY, {
            type,
            alg: key.alg,
            commonName: c.var.tenant.id,
            validityDays: params.validity_days ?? DEFAULT_VALIDITY_DAYS[type],
            now: at,
          })
        : null;
      const { revoked } = unwrap(await targetTenant(c).signingKeys(auditContext(c)).revoke(type, key.kid, replacement));
      return c.json({ cert: revoked.cert, kid: revoked.kid }, 201);
    },
  }),
  defineRoute({
    method: "post",
    path: "/keys/signing/{kid}/renew",
    invalidatesConfig: true,
    scope: "create:signing_keys",
    summary: "Re-issue the certificate over the existing key pair (kid and public key survive), valid from now",
    query: LIFECYCLE_QUERY,
    status: 201,
    async handler(c, { params: path }) {
      const type = keyType(c);
      const params = await lifecycleParams(c);
      if (params.activate_in_days !== undefined || params.grace_days !== undefined) {
        throw problem("renew_validity_only");
      }
      const { key } = await findKey(c, type, path.kid ?? "");
      assertOwned(key);
      const at = now();
      const { cert, expires_at } = await renewCertificate(c.env.ENCRYPTION_KEY, key, {
        commonName: c.var.tenant.id,
        validityDays: params.validity_days ?? DEFAULT_VALIDITY_DAYS[type],
        now: at,
      });
      const renewed = unwrap(await targetTenant(c).signingKeys(auditContext(c)).renew(type, key.kid, cert, expires_at));
      const keys = await targetTenant(c).signingKeys().list(type);
      return c.json(await presentKey(keys, renewed, at), 201);
    },
  }),
];
