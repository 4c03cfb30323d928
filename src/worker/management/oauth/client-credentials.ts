import { calculateJwkThumbprint, exportJWK, importSPKI } from "jose";
import { randomId } from "../../../shared/crypto/random";
import { problem, unwrap } from "../../../shared/errors";
import { type ClientCredentialRecord, createClientCredentialBody, type NewClientCredential, updateClientCredentialBody } from "../../../shared/schemas/clients";
import type { z } from "zod";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";
import { refuseCredentialsOfStrongerClient } from "../operator-authority";

/** The smallest RSA modulus a credential may have (NIST SP 800-131A; the reference platform's minimum too). */
const MIN_RSA_BITS = 2048;

/** A credential in the reference platform's shape: never the key material itself. */
function present(c: ClientCredentialRecord) {
  return {
    id: c.id,
    ...(c.name === null ? {} : { name: c.name }),
    kid: c.kid,
    alg: c.alg,
    credential_type: c.credential_type,
    created_at: c.created_at,
    updated_at: c.updated_at,
    ...(c.expires_at === null ? {} : { expires_at: c.expires_at }),
  };
}

/** The public JWK of a PEM public key, with its RFC 7638 thumbprint as kid; a bad or weak key is a 400. */
async function publicJwk(pem: string, alg: string): Promise<Record<string, string>> {
  if (!/-----BEGIN PUBLIC KEY-----/.test(pem)) throw problem("client_credential_pem_invalid", { detail: "not a BEGIN PUBLIC KEY block" });
  let jwk: Record<string, unknown>;
  try {
    jwk = (await exportJWK(await importSPKI(pem.trim(), alg, { extractable: true }))) as Record<string, unknown>;
  } catch (error) {
    throw problem("client_credential_pem_invalid", { detail: (error as Error).message });
  }
  const bits = typeof jwk.n === "string" ? Math.floor((jwk.n.length * 6) / 8) * 8 : 0;
  if (jwk.kty !== "RSA" || bits < MIN_RSA_BITS) throw problem("client_credential_pem_invalid", { detail: `an RSA key of ${bits} bits` });
  const kid = await calculateJwkThumbprint(jwk as never, "sha256");
  return { kty: "RSA", n: String(jwk.n), e: String(jwk.e), kid, alg, use: "sig" };
}

/**
 * A new credential of `clientId` from a POST body (the route's, or one inside `client_authentication_methods`
 * of POST /clients): public keys only, the PEM parsed and checked before anything is written.
 */
export async function credentialFrom(clientId: string, body: z.infer<typeof createClientCredentialBody>): Promise<NewClientCredential> {
  if (body.credential_type !== "public_key") throw problem("client_credential_type_unsupported", { type: body.credential_type });
  if (!body.pem) throw problem("invalid_body", { detail: "pem is required for a public_key credential" });
  const alg = body.alg ?? "RS256";
  const jwk = await publicJwk(body.pem, alg);
  return {
    id: randomId("cred_"),
    client_id: clientId,
    name: body.name ?? null,
    credential_type: "public_key",
    kid: jwk.kid as string,
    alg,
    public_jwk: jwk,
    expires_at: body.expires_at ? Date.parse(body.expires_at) : null,
  };
}

const PATH = "/clients/{id}/credentials";

/**
 * A client's credentials (issue 28 point 2): the public keys its private_key_jwt assertions are signed with,
 * used beside its `jwks` until they expire. Terraform's auth0_client_credentials and the reference SDKs
 * manage them here.
 */
export const clientCredentialRoutes = [
  defineRoute({
    method: "get",
    path: PATH,
    scope: "read:client_credentials",
    summary: "The client's credentials (public keys for private_key_jwt), oldest first",
    status: 200,
    async handler(c, { params }) {
      return c.json(unwrap(await targetTenant(c).clientCredentials().list(params.id)).map(present));
    },
  }),
  defineRoute({
    method: "post",
    path: PATH,
    scope: "create:client_credentials",
    summary: "Add a public_key credential from a PEM public key (RSA >= 2048 bits; alg RS256, RS384 or PS256)",
    body: createClientCredentialBody,
    status: 201,
    async handler(c, { params, body }) {
      await refuseCredentialsOfStrongerClient(c, params.id);
      const credential = unwrap(await targetTenant(c).clientCredentials(auditContext(c)).create(await credentialFrom(params.id, body)));
      return c.json(present(credential), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: `${PATH}/{credential_id}`,
    scope: "read:client_credentials",
    summary: "One credential of the client",
    status: 200,
    async handler(c, { params }) {
      return c.json(present(unwrap(await targetTenant(c).clientCredentials().get(params.id, params.credential_id))));
    },
  }),
  defineRoute({
    method: "patch",
    path: `${PATH}/{credential_id}`,
    scope: "update:client_credentials",
    summary: "Change when a credential expires (null: never)",
    body: updateClientCredentialBody,
    status: 200,
    async handler(c, { params, body }) {
      const expiresAt = body.expires_at === null ? null : Date.parse(body.expires_at);
      return c.json(present(unwrap(await targetTenant(c).clientCredentials(auditContext(c)).setExpiry(params.id, params.credential_id, expiresAt))));
    },
  }),
  defineRoute({
    method: "delete",
    path: `${PATH}/{credential_id}`,
    scope: "delete:client_credentials",
    summary: "Remove a credential: assertions signed with its key stop verifying",
    status: 204,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).clientCredentials(auditContext(c)).delete(params.id, params.credential_id));
      return c.body(null, 204);
    },
  }),
];
