import { requiresDpop } from "../../../shared/schemas/resource-servers";
import { dpopRequired } from "../dpop/required";
import { OAuthError } from "../../../shared/errors";
import type { CodeGrant, RefreshDevice, RefreshLogin, RefreshRotation, RotateOutcome } from "../../../shared/types";
import { type ClientRecord, clientTokensRevokedBefore } from "../../../shared/schemas/clients";
import { refreshTokenEvent } from "../../../shared/schemas/refresh-tokens";
import type { Json } from "../../../shared/types";
import type { UserRecord } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { tenantObject, userObject } from "../../tenant/stubs";
import {
  formatRefreshToken,
  newRefreshSecret,
  newRefreshTokenId,
  parseRefreshToken,
  refreshLeewayMs,
  refreshSecretHash,
  refreshWindows,
  rotationLifetimes,
  successorSecret,
} from "../tokens/refresh-token";
import { type IssuedUserTokens, issueUserTokens } from "../tokens/user-tokens";
import type { GrantContext } from "./context";
import { hasEffects, type PostLoginOutcome, runPostLogin } from "../../actions/post-login";
import { boundTo } from "../../actions/runtime";
import { auditContext } from "../../http/audit";
import { invalidGrant } from "./context";
import { assertOrganizationsAllowed, currentMembership, memberOf, notAMember } from "./organization";

/** SPEC §7: the exact `invalid_grant` descriptions of the refresh grant. */
const REASONS = {
  unknown: "Invalid refresh token",
  client_mismatch: "Invalid grant",
  revoked: "Refresh token has been revoked",
  reused: "Refresh token has been revoked",
  expired: "Refresh token has expired",
  blocked: "user is blocked",
  dpop_mismatch: "The refresh token is bound to a DPoP key: a proof of that key is required",
} as const;

/**
 * The user's permissions on the token's audience: those read with the user, or, in an organization and on an
 * API that enforces RBAC, read again with the member's roles there (issue 11).
 */
async function permissionsFor(
  ctx: GrantContext,
  userId: string,
  audience: string | null,
  organizationId: string | null,
  read: Record<string, string[]>,
): Promise<string[]> {
  if (!audience) return [];
  const api = ctx.config.resourceServers.find((r) => r.identifier === audience);
  if (!organizationId || !api?.enforce_policies || api.is_system) return read[audience] ?? [];
  return tenantObject(ctx.c.env, ctx.c.get("tenant").id).userAuthorization().permissionNames(userId, audience, organizationId);
}

/**
 * The answer to a refused rotation. A genuine token revoked by a block's cascade tells its blocked user so;
 * any other refusal says only what is wrong with the token (the user's state is never revealed to a token
 * that is not genuine).
 */
function refusal(client: ClientRecord, outcome: Extract<RotateOutcome, { ok: false }>, user: UserRecord | null): OAuthError {
  if (outcome.reason === "invalid_scope") return new OAuthError("invalid_scope", `Scopes not granted by the refresh token: ${outcome.wider.join(" ")}`);
  return invalidGrant(client, outcome.reason === "revoked" && user?.blocked ? REASONS.blocked : REASONS[outcome.reason]);
}

/** What the device facts of a token record about this request. */
export function requestDevice(c: AppContext, first: boolean): RefreshDevice {
  const ip = c.req.header("cf-connecting-ip") ?? c.req.header("x-real-ip");
  const agent = c.req.header("user-agent");
  const last = { ...(ip ? { last_ip: ip } : {}), ...(agent ? { last_user_agent: agent.slice(0, 512) } : {}) };
  if (!first) return last;
  return { ...last, ...(ip ? { initial_ip: ip } : {}), ...(agent ? { initial_user_agent: agent.slice(0, 512) } : {}) };
}

/**
 * Whether a grant earns a refresh token (SPEC §4.1 rule 1): `offline_access` in the effective scope, the
 * client allowed to use the refresh grant, and either no audience or an API that allows offline access.
 */
export function earnsRefreshToken(c: GrantContext, client: ClientRecord, scope: string, audience: string | undefined): boolean {
  if (!scope.split(" ").includes("offline_access")) return false;
  if (client.grant_types.length > 0 && !client.grant_types.includes("refresh_token")) return false;
  if (!audience) return true;
  return c.config.resourceServers.some((r) => r.identifier === audience && r.allow_offline_access);
}

/**
 * Starts a refresh-token family in the user's object and answers the token (first of its family); refused
 * (`invalid_grant`) when the session it would live under has ended meanwhile.
 */
export async function issueRefreshToken(
  ctx: GrantContext,
  client: ClientRecord,
  user: UserRecord,
  grant: CodeGrant & { effectiveScope: string },
  sessionId: string | null,
  familyId = newRefreshTokenId(),
): Promise<string> {
  const { c } = ctx;
  const secret = newRefreshSecret();
  const { absoluteMs, idleMs } = refreshWindows(client, ctx.config);
  const login: RefreshLogin = {
    connection: user.connection,
    strategy: "auth0",
    auth_time: grant.auth_time,
    ...(grant.organization ? { organization: grant.organization } : {}),
    // RFC 9449 §5: a public client's refresh token is bound to the DPoP key it was issued with (a confidential
    // client's is already bound to its authentication).
    ...(ctx.dpopJkt && client.token_endpoint_auth_method === "none" ? { dpop_jkt: ctx.dpopJkt } : {}),
  };
  const issued = await userObject(c.env, c.get("tenant").id, user.user_id).refreshTokens().issue({
    id: familyId,
    token_hash: await refreshSecretHash(secret),
    client_id: client.client_id,
    user_id: user.user_id,
    session_id: sessionId,
    scope: grant.effectiveScope,
    audience: grant.audience ?? null,
    login,
    device: requestDevice(c, true),
    lifetime_ms: absoluteMs,
    idle_lifetime_ms: idleMs,
  });
  // The login's session was revoked, or its code replayed, after the code was redeemed and before this issue:
  // the cascade (or the replay) reached the user's object first, so nothing is issued (no live family).
  if (issued === "session_ended") throw invalidGrant(client, "The session of this authorization has ended");
  if (issued === "code_replayed") throw invalidGrant(client, "Authorization code has already been used");
  return formatRefreshToken({ tenantId: c.get("tenant").id, userId: user.user_id, id: familyId, secret });
}

/**
 * `refresh_token` (RFC 6749 §6, RFC 9700 §4.14.2): rotates the presented token in its user's object and
 * issues new tokens from the facts stored with it (scope, audience, session, login), never from the login
 * session. A narrower `scope` may be asked for; a wider one is `invalid_scope`.
 */
export async function refreshTokenGrant(ctx: GrantContext, client: ClientRecord): Promise<IssuedUserTokens & { refresh_token: string }> {
  const { c, params } = ctx;
  const presented = params.refresh_token ?? "";
  const parsed = parseRefreshToken(presented);
  if (!parsed || parsed.tenantId !== c.get("tenant").id) throw invalidGrant(client, REASONS.unknown);
  const asked = params.scope ? params.scope.split(" ").filter(Boolean) : null;
  // SPEC §4.1: `organization` switches the context after a membership check, made first: a refused switch
  // must not spend the token (it is then only checked, reuse detection included, never rotated). The answer
  // says "not a member" only once the token proved genuine (a forged token learns nothing about members).
  if (params.organization) assertOrganizationsAllowed(client);
  const switched = params.organization ? await memberOf(ctx, params.organization, parsed.userId) : null;
  const nextSecret = await successorSecret(c.env.ENCRYPTION_KEY, parsed.secret);
  const rotation: RefreshRotation = {
    id: parsed.id,
    token_hash: await refreshSecretHash(parsed.secret),
    client_id: client.client_id,
    successor_id: newRefreshTokenId(),
    successor_hash: await refreshSecretHash(nextSecret),
    leeway_ms: refreshLeewayMs(client),
    device: requestDevice(c, false),
    // A wider scope is refused in the user object before the rotation, so the token stays usable.
    scope: asked,
    revoked_before: clientTokensRevokedBefore(client),
    dpop_jkt: ctx.dpopJkt ?? null,
  };
  const lifetimes = rotationLifetimes(client, ctx.config);
  const holder = userObject(c.env, parsed.tenantId, parsed.userId);
  // Post-login actions may deny the refresh: with actions bound, the token is first only checked, the
  // actions run on its facts, and it rotates only once they allow it (a denied refresh never spends it).
  const withActions = boundTo(ctx.config, "post-login").length > 0;
  // Likewise, without a DPoP proof while some API takes only bound tokens, the token is first only checked:
  // a refresh refused for its API's binding requirement must not spend it.
  const checkBinding = !ctx.dpopJkt && ctx.config.resourceServers.some(requiresDpop);
  const checkFirst = withActions || checkBinding;
  const [outcome, subject] = await Promise.all([
    holder.rotateRefreshToken({ ...rotation, check_only: (Boolean(params.organization) && !switched) || checkFirst }, lifetimes),
    // The user (blocked or deleted since the token was issued: refused even before the revocation cascade
    // lands) and its RBAC permissions, in the one read this grant makes of its user. A token rotated for a
    // user refused here is not worth keeping: blocking and deletion revoke the user's tokens anyway. Its
    // identities are read only for post-login actions (event.user): nothing else here shows them; its
    // permissions only when an API of this snapshot enforces RBAC (no other API's token uses them).
    tenantObject(c.env, parsed.tenantId).tokenSubject(parsed.userId, withActions, ctx.config.resourceServers.some((r) => r.enforce_policies)),
  ]);
  const user = subject.user;
  if (!outcome.ok) throw refusal(client, outcome, user);
  if (user?.blocked) throw invalidGrant(client, REASONS.blocked);
  if (!user) throw invalidGrant(client, REASONS.revoked);
  if (params.organization && !switched) throw notAMember(client, params.organization);
  let token = outcome.token;
  const api = token.audience ? ctx.config.resourceServers.find((r) => r.identifier === token.audience) : undefined;
  if (requiresDpop(api) && !ctx.dpopJkt) throw dpopRequired(token.audience as string);
  // The organization the token was issued in must still count the user as a member.
  const organization = switched ?? (token.login.organization ? await currentMembership(ctx, client, token.login.organization, user.user_id) : null);
  const held = token.scope.split(" ").filter(Boolean);
  const scope = asked ?? held;
  // The reference platform runs post-login actions on refresh too (transaction.protocol oauth2-refresh-token).
  // Without any bound, nothing runs: the action event (the token's facts, scopes) is not even built.
  const actions: PostLoginOutcome = !withActions ? { ok: true, effects: null } : await runPostLogin(c, {
    config: ctx.config,
    client,
    user,
    protocol: "oauth2-refresh-token",
    scope: scope.join(" "),
    audience: token.audience ?? undefined,
    organization: token.login.organization,
    sessionId: token.session_id,
    refreshToken: refreshTokenEvent(token) as unknown as Record<string, Json>,
  });
  if (hasEffects(actions.effects)) {
    const actor = { type: "user" as const, id: user.user_id, client_id: client.client_id };
    await tenantObject(c.env, parsed.tenantId).actions(auditContext(c, { actor })).applyEffects(user.user_id, actions.effects);
  }
  if (!actions.ok) {
    // api.refreshToken.revoke: the presented token's family ends with the refused exchange (the reference's rule).
    if (actions.revoke_refresh_token) await holder.refreshTokens().revokeFamilies([token.id]);
    throw new OAuthError("access_denied", actions.description);
  }
  if (checkFirst) {
    const rotated = await holder.rotateRefreshToken(rotation, lifetimes);
    if (!rotated.ok) throw refusal(client, rotated, user);
    token = rotated.token;
  }
  const tokens = await issueUserTokens({
    tenant: c.get("tenant"),
    config: ctx.config,
    signer: await ctx.signer(),
    signerFor: ctx.signer,
    client,
    user,
    grant: {
      scope: scope.join(" "),
      auth_time: token.login.auth_time ?? Math.floor(Date.parse(token.created_at) / 1000),
      ...(token.audience ? { audience: token.audience } : {}),
      ...(organization ? { organization: organization.id, organization_name: organization.name } : {}),
      ...(actions.custom_claims ? { custom_claims: actions.custom_claims } : {}),
      ...(actions.access_scope ? { access_scope: actions.access_scope } : {}),
    },
    permissions: await permissionsFor(ctx, user.user_id, token.audience, organization?.id ?? null, subject.permissions),
    sessionId: token.session_id,
    withAccessToken: true,
    withIdToken: true,
    ...(ctx.dpopJkt ? { dpopJkt: ctx.dpopJkt } : {}),
  });
  const refresh_token = formatRefreshToken({ ...parsed, id: token.id, secret: nextSecret });
  return { ...tokens, refresh_token };
}
