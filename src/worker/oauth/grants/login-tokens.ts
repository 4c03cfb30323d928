import type { CodeGrant } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { UserRecord } from "../../../shared/schemas/users";
import { tenantObject } from "../../tenant/stubs";
import { type IssuedUserTokens, issueUserTokens } from "../tokens/user-tokens";
import type { GrantContext } from "./context";
import { earnsRefreshToken, issueRefreshToken } from "./refresh-token";

/**
 * The tokens of a login made at the token endpoint (the passwordless OTP grant, or an MFA grant completing
 * one): access and ID tokens bound to the login's session, a refresh token only with `offline_access`
 * (SPEC §4.1 rule 1), and the user's permissions only for an RBAC API.
 */
export async function issueLoginTokens(ctx: GrantContext, client: ClientRecord, user: UserRecord, grant: CodeGrant, sessionId: string): Promise<IssuedUserTokens & { refresh_token?: string }> {
  const { c, config } = ctx;
  const api = grant.audience ? config.resourceServers.find((r) => r.identifier === grant.audience) : undefined;
  const permissions =
    api?.enforce_policies && !api.is_system ? await tenantObject(c.env, c.var.tenant.id).userAuthorization().permissionNames(user.user_id, api.identifier) : [];
  const tokens = await issueUserTokens({
    tenant: c.var.tenant,
    config,
    signer: await ctx.signer(),
    signerFor: ctx.signer,
    client,
    user,
    grant,
    permissions,
    sessionId,
    withAccessToken: true,
    withIdToken: true,
    ...(ctx.dpopJkt ? { dpopJkt: ctx.dpopJkt } : {}),
  });
  if (!earnsRefreshToken(ctx, client, tokens.scope, grant.audience)) return tokens;
  const refresh_token = await issueRefreshToken(ctx, client, user, { ...grant, effectiveScope: tokens.scope }, sessionId);
  return { ...tokens, refresh_token };
}
