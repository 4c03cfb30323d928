import { toBase64Url } from "../../../shared/crypto/encoding";
import { sha256 } from "../../../shared/crypto/compare";
import { randomToken } from "../../../shared/crypto/random";
import { OAuthError } from "../../../shared/errors";
import type { ClientRecord } from "../../../shared/types";
import type { GrantContext } from "./context";
import { invalidGrant } from "./context";
import { hashSecret } from "../../login/session";
import { tenantObject } from "../../tenant/stubs";
import { issueUserTokens, type IssuedUserTokens } from "../tokens/user-tokens";

const REASONS: Record<string, string> = {
  unknown: "Invalid authorization code",
  expired: "Authorization code has expired",
  consumed: "Authorization code has already been used",
  client_mismatch: "Invalid authorization code",
  redirect_mismatch: "redirect_uri does not match the one used in the authorization request",
  pkce_mismatch: "Failed to verify code verifier",
};

/**
 * `authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6). The code is consumed by one conditional update
 * inside the tenant object, together with the client, redirect_uri and PKCE checks, so it is redeemed
 * exactly once even under concurrency, and a refused attempt does not burn it.
 */
export async function authorizationCodeGrant(ctx: GrantContext, client: ClientRecord): Promise<IssuedUserTokens> {
  const { params, c } = ctx;
  if (!params.code) throw new OAuthError("invalid_request", "Missing required parameter: code");
  if (!params.redirect_uri) throw new OAuthError("invalid_request", "Missing required parameter: redirect_uri");
  const verifier = params.code_verifier ?? null;
  if (verifier !== null && !/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) {
    throw new OAuthError("invalid_request", "code_verifier must be 43-128 characters of [A-Za-z0-9-._~]");
  }
  const stub = tenantObject(c.env, c.var.tenant.id);
  const accessJti = randomToken(16);
  const outcome = await stub.consumeAuthorizationCode({
    access_jti: accessJti,
    code_hash: await hashSecret(params.code),
    client_id: client.client_id,
    redirect_uri: params.redirect_uri,
    verifier_s256: verifier === null ? null : toBase64Url(await sha256(verifier)),
    verifier_plain: verifier,
  });
  if (!outcome.ok) throw invalidGrant(client, REASONS[outcome.reason] ?? "Invalid grant");
  const user = outcome.code.user;
  if (!user || user.blocked) throw invalidGrant(client, "The user is blocked or no longer exists");
  return issueUserTokens({
    tenant: c.var.tenant,
    config: ctx.config,
    signer: await ctx.signer(),
    signerFor: ctx.signer,
    client,
    user,
    grant: outcome.code.grant,
    sessionId: outcome.code.session_id,
    withAccessToken: true,
    withIdToken: true,
    accessJti,
  });
}
