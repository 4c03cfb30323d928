/**
 * `client_authentication_methods` on POST/PATCH /clients (issue 28 point 2), the reference platform's way to
 * turn on private_key_jwt that Terraform's auth0_client_credentials and the SDKs use: on create the credentials
 * themselves, on update ids of the client's credentials (/clients/{id}/credentials), null to leave it. The
 * client then authenticates at the token endpoint with exactly those credentials' keys (and its own `jwks`, a
 * Gatehouse extension). Mutual TLS (`tls_client_auth`, `self_signed_tls_client_auth`) is refused with a 400:
 * Gatehouse terminates no client certificates.
 */
import { problem } from "../../../shared/errors";
import type { createAuthMethodsBody, NewClientCredential, updateAuthMethodsBody } from "../../../shared/schemas/clients";
import type { Json } from "../../../shared/types";
import type { z } from "zod";
import { credentialFrom } from "./client-credentials";

type CreateMethods = z.infer<typeof createAuthMethodsBody>;
type UpdateMethods = z.infer<typeof updateAuthMethodsBody>;

/** The method as stored in the client's settings and shown on reads: credential ids only. */
const stored = (ids: string[]): Json => ({ private_key_jwt: { credentials: ids.map((id) => ({ id })) } });

function refuseUnoffered(methods: CreateMethods | UpdateMethods): void {
  for (const method of ["tls_client_auth", "self_signed_tls_client_auth"] as const) {
    if (methods[method]) throw problem("client_credential_type_unsupported", { type: method });
  }
  if (!methods.private_key_jwt) throw problem("invalid_body", { detail: "client_authentication_methods must set private_key_jwt" });
}

function refuseBoth(tokenEndpointAuthMethod: string | null | undefined): void {
  if (tokenEndpointAuthMethod) {
    throw problem("invalid_body", { detail: "token_endpoint_auth_method and client_authentication_methods cannot both be set (send token_endpoint_auth_method: null)" });
  }
}

/**
 * POST /clients: the inline credentials parsed (PEM -> JWK) before anything is written, with what the client
 * stores: `token_endpoint_auth_method` private_key_jwt and the method with the new credentials' ids.
 */
export async function createWithMethods(
  clientId: string,
  methods: CreateMethods | undefined,
  tokenEndpointAuthMethod: string | undefined,
): Promise<{ credentials: NewClientCredential[]; method?: string; setting?: Json }> {
  if (!methods) return { credentials: [] };
  refuseUnoffered(methods);
  refuseBoth(tokenEndpointAuthMethod);
  const credentials = await Promise.all((methods.private_key_jwt?.credentials ?? []).map((body) => credentialFrom(clientId, body)));
  if (new Set(credentials.map((c) => c.kid)).size !== credentials.length) throw problem("client_credential_conflict");
  return { credentials, method: "private_key_jwt", setting: stored(credentials.map((c) => c.id)) };
}

/**
 * PATCH /clients/{id}: the method's credential ids (the object checks they are the client's), or null to
 * clear it, in which case the patch must name the method the client uses instead.
 */
export function updateWithMethods(
  methods: UpdateMethods | null | undefined,
  tokenEndpointAuthMethod: string | null | undefined,
): { method?: string; setting?: Json | null } {
  if (methods === undefined) {
    if (tokenEndpointAuthMethod === null) throw problem("invalid_body", { detail: "token_endpoint_auth_method may be null only beside client_authentication_methods" });
    return tokenEndpointAuthMethod === undefined ? {} : { method: tokenEndpointAuthMethod, setting: null };
  }
  if (methods === null) {
    if (!tokenEndpointAuthMethod) throw problem("invalid_body", { detail: "clearing client_authentication_methods needs the token_endpoint_auth_method the client uses instead" });
    return { method: tokenEndpointAuthMethod, setting: null };
  }
  refuseUnoffered(methods);
  refuseBoth(tokenEndpointAuthMethod);
  const ids = (methods.private_key_jwt?.credentials ?? []).map((c) => c.id);
  if (new Set(ids).size !== ids.length) throw problem("invalid_body", { detail: "client_authentication_methods.private_key_jwt.credentials must not repeat an id" });
  return { method: "private_key_jwt", setting: stored(ids) };
}
