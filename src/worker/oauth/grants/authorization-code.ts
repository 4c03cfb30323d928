import { OAuthError } from "../../../shared/errors";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { GrantContext } from "./context";
import { invalidGrant } from "./context";
import { type RedemptionFailure, redeemCode } from "../tokens/redeem-code";
import type { IssuedUserTokens } from "../tokens/user-tokens";
import { earnsRefreshToken, issueRefreshToken } from "./refresh-token";

const REASONS: Record<RedemptionFailure, string> = {
  unknown: "Invalid authorization code",
  expired: "Authorization code has expired",
  consumed: "Authorization code has already been used",
  client_mismatch: "Invalid authorization code",
  redirect_mismatch: "redirect_uri does not match the one used in the authorization request",
  pkce_mismatch: "Failed to verify code verifier",
  user_unavailable: "The user no longer exists",
  // SPEC §7: a blocked user is refused on every grant that acts for them.
  user_blocked: "user is blocked",
};

/**
 * `authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6). The code is consumed by one conditional update
 * inside the tenant object, together with the client, redirect_uri and PKCE checks, so it is redeemed
 * exactly once even under concurrency, and a refused attempt does not burn it.
 */
export async function authorizationCodeGrant(
  ctx: GrantContext,
  client: ClientRecord,
): Promise<IssuedUserTokens & { refresh_token?: string }> {
  const { params, c } = ctx;
  if (!params.code) throw new OAuthError("invalid_request", "Missing required parameter: code");
  if (!params.redirect_uri) throw new OAuthError("invalid_request", "Missing required parameter: redirect_uri");
  const verifier = params.code_verifier ?? null;
  if (verifier !== null && !/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) {
    throw new OAuthError("invalid_request", "code_verifier must be 43-128 characters of [A-Za-z0-9-._~]");
  }
  const redeemed = await redeemCode(c, {
    config: ctx.config,
    signer: ctx.signer,
    client,
    code: params.code,
    redirectUris: [params.redirect_uri],
    verifier,
    ...(ctx.dpopJkt ? { dpopJkt: ctx.dpopJkt } : {}),
  });
  if (!redeemed.ok) throw invalidGrant(client, REASONS[redeemed.reason] ?? "Invalid grant");
  const { tokens, code } = redeemed;
  if (!earnsRefreshToken(ctx, client, tokens.scope, code.grant.audience)) return tokens;
  const refresh_token = await issueRefreshToken(
    ctx,
    client,
    code.user,
    { ...code.grant, effectiveScope: tokens.scope },
    code.sessionId,
    code.refreshFamilyId,
  );
  return { ...tokens, refresh_token };
}
