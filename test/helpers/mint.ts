import { env, runInDurableObject } from "cloudflare:test";
import { importJWK, type JWTPayload, SignJWT } from "jose";
import { fieldCipher } from "../../src/shared/crypto/encryption";

/**
 * Mints a JWT with a tenant's real current signing key (read from its object and decrypted), so tests can
 * vary one claim at a time (issuer, audience, expiry, tenant_id) and watch the server's verdict.
 */
export async function mintWithTenantKey(
  tenantId: string,
  claims: JWTPayload & { iss: string; aud: string | string[] },
  expiresIn: string | number = "5m",
): Promise<string> {
  const row = await runInDurableObject(env.TENANT.getByName(tenantId), (_o, state) =>
    state.storage.sql
      .exec(
        "SELECT kid, private_jwk_enc FROM signing_keys WHERE revoked_at IS NULL AND activates_at <= ? ORDER BY activates_at DESC, created_at DESC LIMIT 1",
        Date.now(),
      )
      .one(),
  );
  const cipher = await fieldCipher(env.ENCRYPTION_KEY);
  const jwk = JSON.parse(await cipher.decrypt(String(row.private_jwk_enc), `signing_key:${row.kid}`));
  const key = await importJWK(jwk, "RS256");
  // By default the shape of a client_credentials token; pass `gty`/`sub` to mint a user-shaped one.
  return new SignJWT({ tenant_id: tenantId, sub: "test@clients", gty: "client-credentials", ...claims })
    .setProtectedHeader({ alg: "RS256", kid: String(row.kid) })
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(key);
}
