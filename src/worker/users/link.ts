/**
 * POST /api/v2/users/{id}/identities: which account to link. `{provider, user_id}` needs `update:users`;
 * `{link_with}` is the secondary account's ID token, the only form a user's own token
 * (`update:current_user_identities`) may use, and it must have been issued to the same application.
 */
import { jwtVerify } from "jose";
import { problem } from "../../shared/errors";
import type { LinkIdentityInput } from "../../shared/schemas/users";
import type { IdentityRef } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { configOf } from "../login/connection";
import { jwksVerifier } from "../tenant/keys";

/** The account an ID token names: its `sub`, split into provider and bare id at the first pipe. */
async function accountOfIdToken(c: AppContext, token: string): Promise<IdentityRef> {
  const auth = c.var.auth;
  const tenantId = c.var.tenant.id;
  const settings = c.var.settings;
  const { keys, algorithms } = await jwksVerifier(c.env, settings, tenantId);
  const issuers = [...new Set([c.var.tenant.issuer, settings.issuer, `${settings.issuerProtocol}//${tenantId}.${settings.apexHost}/`])];
  let payload: Awaited<ReturnType<typeof jwtVerify>>["payload"];
  try {
    ({ payload } = await jwtVerify(token, keys, { issuer: issuers, algorithms }));
  } catch {
    throw problem("invalid_link_token");
  }
  const audiences = [payload.aud ?? []].flat();
  const sameApp = auth.kind === "user" ? auth.clientId !== null && audiences.includes(auth.clientId) : (await configOf(c)).clients.some((x) => audiences.includes(x.client_id));
  const sub = typeof payload.sub === "string" ? payload.sub : "";
  const pipe = sub.indexOf("|");
  if (!sameApp || (payload.tenant_id !== undefined && payload.tenant_id !== tenantId) || pipe <= 0) throw problem("invalid_link_token");
  return { provider: sub.slice(0, pipe), user_id: sub.slice(pipe + 1) };
}

/** The identity reference a link request names (403 for a user's token without `link_with`). */
export async function linkTarget(c: AppContext, body: LinkIdentityInput): Promise<IdentityRef> {
  if ("link_with" in body) return accountOfIdToken(c, body.link_with);
  if (c.var.auth.kind === "user") throw problem("insufficient_scope", { scope: "update:users" });
  return { provider: body.provider, user_id: body.user_id, ...(body.connection_id !== undefined ? { connection_id: body.connection_id } : {}) };
}
