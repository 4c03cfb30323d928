import { now } from "../../../shared/clock";
import { randomId, randomToken } from "../../../shared/crypto/random";
import { OAuthError } from "../../../shared/errors";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { UserRecord } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { amrAfter, type UsableMethods, usableMethods } from "../../login/mfa/policy";
import type { Verdict } from "../../login/mfa/steps";
import { hashSecret, prepareSession, sessionLifetimes } from "../../login/session";
import { tenantObject, userObject } from "../../tenant/stubs";
import type { IssuedUserTokens } from "../tokens/user-tokens";
import { type GrantContext, invalidGrant } from "./context";
import { issueLoginTokens } from "./login-tokens";

/**
 * The `mfa_token` of the reference platform's MFA API: a token request that authenticated a user under the
 * tenant's MFA policy (SPEC §4.2 `all-applications`) answers 403 `mfa_required` with this token instead of
 * tokens, and an MFA grant (`mfa-otp`, `mfa-oob`, `mfa-recovery-code`) completes it. The token is opaque
 * (256 random bits), bound to its client and user, lives 10 minutes and is consumed once by the success;
 * only its hash is stored (an `auth_challenges` row, whose data is the login waiting for its second factor).
 */

/** How long an MFA token can be used (the reference platform's, not configurable). @default 10 minutes */
export const MFA_TOKEN_TTL_MS = 10 * 60 * 1000;
const PURPOSE = "mfa-token";
/** The purpose of the codes POST /mfa/challenge texts for `mfa-oob` (subject: the MFA token's id). */
export const MFA_OOB_PURPOSE = "mfa-oob";

/** The login an MFA token holds until its second factor is verified. */
export interface PendingGrantLogin {
  user_id: string;
  /** The first factor's amr (RFC 8176), e.g. `["otp"]` for an email code. */
  amr: string[];
  scope: string;
  audience?: string;
  nonce?: string;
}

/** A live MFA token of this client, with its login, its user and the user's factors the token endpoint can verify. */
export interface OpenedMfaToken {
  id: string;
  pending: PendingGrantLogin;
  user: UserRecord;
  usable: UsableMethods;
  /** Codes texted under this token since the `sent` window asked of {@link openMfaToken} (0 when not asked). */
  sent: number;
  /** The tenant's SMS templates, read with the token when `sent` was asked ({} otherwise). */
  smsTemplates: Record<string, unknown>;
}

const tokenHash = (token: string) => hashSecret(`mfa-token:${token}`);

/** The user's factors the token endpoint can verify: an authenticator app, SMS and recovery codes (no WebAuthn). */
export async function grantFactors(c: AppContext, config: GrantContext["config"], userId: string): Promise<UsableMethods> {
  const stub = tenantObject(c.env, c.var.tenant.id);
  const [methods, unused] = await Promise.all([stub.authenticationMethods().list(userId), stub.mfa().unusedRecoveryCodes(userId)]);
  return usableMethods(config, methods, unused);
}

/**
 * Answers `mfa_required` for a user whose first factor the grant verified: stores the pending login under a
 * new MFA token and throws the error that carries it. A user with no factor the token endpoint can verify
 * gets 403 `mfa_registration_required` (enrollment through the MFA API, `/mfa/associate`, is not offered:
 * the login pages or an enrollment ticket enroll), never tokens.
 */
export async function requireMfa(ctx: GrantContext, client: ClientRecord, pending: PendingGrantLogin): Promise<never> {
  const usable = await grantFactors(ctx.c, ctx.config, pending.user_id);
  if (!usable.totp && !usable.phone && !usable.recovery) {
    throw new OAuthError(
      "mfa_registration_required",
      "Multifactor authentication required, but the user has no factor the token endpoint can verify (authenticator app, SMS or recovery code); enroll one through the login pages",
    );
  }
  const token = randomToken(32);
  const hash = await tokenHash(token);
  const data = { ...pending } as unknown as Record<string, string>;
  await tenantObject(ctx.c.env, ctx.c.var.tenant.id)
    .createChallenge({ id: randomId("mfat_"), purpose: PURPOSE, subject: hash, client_id: client.client_id, secret_hash: hash, data, expires_at: now() + MFA_TOKEN_TTL_MS });
  throw new OAuthError("mfa_required", "Multifactor authentication required").withFields({ mfa_token: token });
}

/**
 * The MFA token of a request, for this client: unknown, used or another client's tokens are `Invalid
 * mfa_token` alike (a token tells nothing about other clients); an expired one says so; a user blocked or
 * deleted since is refused. The token, its user and the user's factors (and, with `sent`, the codes texted
 * under it since then) are one read of the tenant (issue 31: was four or five round trips per step).
 */
export async function openMfaToken(
  c: AppContext,
  config: GrantContext["config"],
  client: ClientRecord,
  token: string | undefined,
  sent: { purpose: string; since: number } | null = null,
): Promise<OpenedMfaToken> {
  if (!token) throw new OAuthError("invalid_request", "Missing required parameter: mfa_token");
  const read = await tenantObject(c.env, c.var.tenant.id).mfaTokenRead(PURPOSE, await tokenHash(token), sent);
  const found = read.challenge;
  if (!found || found.consumed || found.client_id !== client.client_id) throw invalidGrant(client, "Invalid mfa_token");
  if (Date.parse(found.expires_at) <= now()) throw invalidGrant(client, "mfa_token is expired");
  const pending = found.data as unknown as PendingGrantLogin;
  const user = read.user;
  if (!user) throw invalidGrant(client, "Invalid mfa_token");
  if (user.blocked) throw invalidGrant(client, "user is blocked");
  return { id: found.id, pending, user, usable: usableMethods(config, read.methods, read.unused_recovery_codes), sent: read.sent, smsTemplates: read.sms_templates };
}

/**
 * One code check under the user's MFA lock, the same one as the login pages' (issue 12 point 3: 5 wrong
 * codes in 5 minutes): refused while locked, counted before `verify` runs and forgiven after a success; a
 * wrong code is logged (`gd_auth_failed`) and answered `invalid_grant` with `wrong`.
 */
export async function checkGrantCode(c: AppContext, client: ClientRecord, user: UserRecord, factor: string, wrong: string, verify: () => Promise<Verdict>): Promise<void> {
  const attempts = userObject(c.env, c.var.tenant.id, user.user_id).mfa();
  const admission = await attempts.begin();
  if (!admission.admitted) throw new OAuthError("too_many_requests", "Too many failed attempts. Wait a few minutes, then try again.", 429);
  const verdict = await verify();
  if (verdict === true) {
    await attempts.settle(true);
    return;
  }
  const audit = auditContext(c, { actor: { type: "user", id: user.user_id, email: user.email, client_id: client.client_id } });
  await tenantObject(c.env, c.var.tenant.id).mfa(audit).recordFailure(user.user_id, factor, verdict);
  throw invalidGrant(client, verdict === "reused" ? `${wrong} It was already used.` : wrong);
}

/**
 * The second factor was verified: the token is consumed, the session starts with `mfa` in its amr and the
 * verified method's use (`methodId`) is recorded, in one commit (a concurrent request with the same token
 * loses and gets `Invalid mfa_token`); then the tokens.
 */
export async function completeMfaGrant(
  ctx: GrantContext,
  client: ClientRecord,
  opened: OpenedMfaToken,
  factor: string,
  methodId: string | null = null,
): Promise<IssuedUserTokens & { refresh_token?: string }> {
  const { c } = ctx;
  const amr = amrAfter(opened.pending.amr, factor);
  const session = await prepareSession(opened.user.user_id, client.client_id, c.var.tenant.issuer, (await sessionLifetimes(c)).absoluteMs);
  const audit = auditContext(c, { actor: { type: "user", id: opened.user.user_id, email: opened.user.email, client_id: client.client_id } });
  if (!(await tenantObject(c.env, c.var.tenant.id).completeMfaGrant(opened.id, session.input, amr, methodId, audit))) throw invalidGrant(client, "Invalid mfa_token");
  const { pending } = opened;
  const grant = {
    scope: pending.scope,
    auth_time: Math.floor((session.input.authenticated_at ?? now()) / 1000),
    amr,
    ...(pending.audience ? { audience: pending.audience } : {}),
    ...(pending.nonce ? { nonce: pending.nonce } : {}),
  };
  return issueLoginTokens(ctx, client, opened.user, grant, session.input.id);
}
