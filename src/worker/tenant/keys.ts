import { now } from "../../shared/clock";
import { encryptionContext } from "../../shared/crypto/contexts";
import { utf8 } from "../../shared/crypto/encoding";
import { fieldCipher } from "../../shared/crypto/encryption";
import { OAuthError } from "../../shared/errors";
import { signingKeyAt } from "../../shared/key-ring";
import type { Settings } from "../settings";
import { memoized, tenantConfig } from "./config-cache";
import { type TenantKeySet, tenantKeySet } from "./key-ring";
import { importSigningKey } from "./signing";
import { tenantConfigSource } from "./stubs";

export interface Signer {
  key: CryptoKey;
  /** Absent for HS256: the API's secret is not a published key. */
  kid?: string;
  alg: string;
}

/**
 * Resolves the signer for an algorithm. HS256 needs the token's audience, whose own secret signs: an API's
 * signing secret for its access tokens (`kind` "api"), a client's secret for its ID tokens ("client").
 */
export type SignerFor = (alg?: string, audience?: string, kind?: "api" | "client") => Promise<Signer>;

/**
 * The key that signs now for an algorithm, imported once per snapshot and kid. Which key signs is computed
 * from the activation and expiry times at each call, so a key scheduled with `activate_in_days` takes over
 * (and an expired one stops, unless no valid key is left) without any write or cache invalidation (SPEC §4.2
 * "Signing keys").
 */
export async function activeSigner(env: Env, settings: Settings, tenantId: string, alg = "RS256"): Promise<Signer> {
  const source = tenantConfigSource(env, tenantId);
  const config = await tenantConfig(tenantId, source, settings);
  // The tenant's own key signs; an inherited (control-plane) key only when it has none of its own that signs.
  const at = now();
  // An expired key of its own signs only when no key at all is valid (signingKeyAt's last resort).
  const own = config.signingKeys.filter((k) => !k.inherited);
  const record =
    signingKeyAt(own, at, "jwt_signing", alg, false) ??
    signingKeyAt(config.signingKeys, at, "jwt_signing", alg, false) ??
    signingKeyAt(own, at, "jwt_signing", alg) ??
    signingKeyAt(config.signingKeys, at, "jwt_signing", alg);
  if (!record) throw new OAuthError("server_error", "The tenant has no active signing key", 500);
  return memoized(tenantId, source, settings, `signer:${record.kid}`, async () => ({
    key: await importSigningKey(env.ENCRYPTION_KEY, record),
    kid: record.kid,
    alg: record.alg,
  }));
}

/**
 * An API's HS256 signer (issue 14): its signing secret, opened once per snapshot. The secret's UTF-8 bytes
 * are the HMAC key, as the reference platform's HS256 tokens use it.
 */
async function apiSecretSigner(env: Env, settings: Settings, tenantId: string, audience: string | undefined): Promise<Signer> {
  const source = tenantConfigSource(env, tenantId);
  const config = await tenantConfig(tenantId, source, settings);
  const api = audience === undefined ? undefined : config.resourceServers.find((r) => r.identifier === audience);
  const sealed = api?.signing_secret_enc;
  if (!api || !sealed) throw new OAuthError("server_error", "The API has no signing secret for HS256", 500);
  return memoized(tenantId, source, settings, `hs256:${api.id}`, async () => {
    const secret = await (await fieldCipher(env.ENCRYPTION_KEY)).decrypt(sealed, encryptionContext.resourceServerSigningSecret(api.id));
    const key = await crypto.subtle.importKey("raw", utf8(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return { key, alg: "HS256" };
  });
}

/**
 * A client's HS256 key for its ID tokens (OIDC Core §10.1: the client secret's UTF-8 bytes), opened once per
 * snapshot; it also verifies them (logout's id_token_hint). Null for a client without a secret.
 */
export async function clientSecretKey(env: Env, settings: Settings, tenantId: string, clientId: string): Promise<CryptoKey | null> {
  const source = tenantConfigSource(env, tenantId);
  const config = await tenantConfig(tenantId, source, settings);
  const sealed = config.clients.find((client) => client.client_id === clientId)?.client_secret_enc;
  if (!sealed) return null;
  return memoized(tenantId, source, settings, `hs256-client:${clientId}`, async () => {
    const secret = await (await fieldCipher(env.ENCRYPTION_KEY)).decrypt(sealed, encryptionContext.clientSecret(clientId));
    return crypto.subtle.importKey("raw", utf8(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
  });
}

async function clientSecretSigner(env: Env, settings: Settings, tenantId: string, clientId: string | undefined): Promise<Signer> {
  const key = clientId === undefined ? null : await clientSecretKey(env, settings, tenantId, clientId);
  if (!key) throw new OAuthError("server_error", "The client has no secret for HS256", 500);
  return { key, alg: "HS256" };
}

/** The signer resolver of a request: the ring's key per algorithm, the audience's own secret for HS256. */
export function signerResolver(env: Env, settings: Settings, tenantId: string): SignerFor {
  return (alg = "RS256", audience, kind = "api") => {
    if (alg !== "HS256") return activeSigner(env, settings, tenantId, alg);
    return kind === "client" ? clientSecretSigner(env, settings, tenantId, audience) : apiSecretSigner(env, settings, tenantId, audience);
  };
}

/**
 * The tenant's published keys at this moment as a jose verifier, with exactly the algorithms they carry:
 * every verifier (management auth, userinfo, token exchange, revoke, logout hint) passes both to jwtVerify.
 */
export function jwksVerifier(env: Env, settings: Settings, tenantId: string): Promise<TenantKeySet> {
  return tenantKeySet(tenantId, tenantConfigSource(env, tenantId), settings);
}
