import { nowSeconds } from "../../../shared/clock";
import { OAuthError } from "../../../shared/errors";
import type { CodeGrant } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import { auditContext } from "../../http/audit";
import { isSignupDisabled } from "../../login/connection";
import { redeemCode } from "../../login/mfa/one-time-codes";
import { isMfaRequired } from "../../login/mfa/policy";
import { prepareSession, sessionLifetimes } from "../../login/session";
import { tenantObject, userObject } from "../../tenant/stubs";
import { passwordlessConnection, passwordlessIdentifier, passwordlessSubject, smsUserId } from "../passwordless";
import { randomId } from "../../../shared/crypto/random";
import type { IssuedUserTokens } from "../tokens/user-tokens";
import { type GrantContext, invalidGrant } from "./context";
import { issueLoginTokens } from "./login-tokens";
import { requireMfa } from "./mfa-token";

const WRONG = { email: "Wrong email or verification code.", sms: "Wrong phone number or verification code." } as const;

/**
 * `http://auth0.com/oauth/grant-type/passwordless/otp` (SPEC §4.1): the code /passwordless/start sent, for
 * the same client, consumed once. Wrong codes count on the code (3) and on the identifier (5 in 5 minutes,
 * in its own user object). Scope and audience default to the authParams stored with the code. The user is
 * created on first login unless the connection disables sign-up. The login starts a session that the
 * tokens (a refresh token only with `offline_access`) are bound to, as an interactive login's are. Under
 * the tenant's MFA policy the answer is `mfa_required` with an `mfa_token` (see ./mfa-token.ts).
 */
export async function passwordlessOtpGrant(ctx: GrantContext, client: ClientRecord): Promise<IssuedUserTokens & { refresh_token?: string }> {
  const { c, params, config } = ctx;
  const realm = params.realm as "email" | "sms";
  const connection = passwordlessConnection(config, realm, client);
  if (!connection) throw new OAuthError("invalid_request", `Connection ${realm} is not enabled for this client`);
  const identifier = passwordlessIdentifier(realm, params.username ?? "");
  if (!identifier) throw invalidGrant(client, WRONG[realm]);
  const audit = auditContext(c, { actor: { type: "anonymous", id: null, client_id: client.client_id } });
  const stub = tenantObject(c.env, c.var.tenant.id);

  const throttle = userObject(c.env, c.var.tenant.id, `passwordless:${realm}:${identifier}`).mfa();
  const admission = await throttle.begin();
  if (!admission.admitted) throw invalidGrant(client, "Too many failed attempts. Wait a few minutes, then ask for a new code.");
  const stored = await redeemCode(c, "passwordless", passwordlessSubject(realm, identifier), client.client_id, params.otp ?? "");
  if (!stored) {
    await stub.passwordless(audit).recordFailure(`wrong code for ${realm}`, client.client_id);
    throw invalidGrant(client, WRONG[realm]);
  }
  await throttle.settle(true);

  const authParams = (stored.auth_params ?? {}) as Record<string, string>;
  const who = {
    connection: realm,
    identifier,
    new_user_id: realm === "email" ? `email|${randomId("", 24)}` : await smsUserId(c.var.tenant.id, identifier),
    allow_signup: !isSignupDisabled(connection),
  };
  const refused = (reason: "blocked" | "signup_disabled") => invalidGrant(client, reason === "blocked" ? "user is blocked" : "Signups are disabled for this connection; the user does not exist");
  const amr = [realm === "email" ? "otp" : "sms"];
  const audience = params.audience ?? authParams.audience;
  const scope = params.scope ?? authParams.scope ?? "openid";
  if (isMfaRequired(config)) {
    // Issue 25 finding 6: the code is one factor; under the policy the session and the tokens wait for a
    // second one (an MFA grant with the mfa_token), as the reference platform's /oauth/token does.
    const resolved = await stub.passwordless(audit).resolve(who, client.client_id);
    if (!resolved.ok) throw refused(resolved.reason);
    return requireMfa(ctx, client, { user_id: resolved.user.user_id, amr, scope, ...(audience ? { audience } : {}), ...(authParams.nonce ? { nonce: authParams.nonce } : {}) });
  }
  const session = await prepareSession("", client.client_id, c.var.tenant.issuer, (await sessionLifetimes(c)).absoluteMs);
  const { user_id: _pending, ...sessionInput } = session.input;
  const outcome = await stub.passwordlessLogin(who, sessionInput, amr, audit);
  if (!outcome.ok) throw refused(outcome.reason);
  const grant: CodeGrant = {
    scope,
    auth_time: Math.floor((session.input.authenticated_at ?? nowSeconds() * 1000) / 1000),
    amr,
    ...(audience ? { audience } : {}),
    ...(authParams.nonce ? { nonce: authParams.nonce } : {}),
  };
  return issueLoginTokens(ctx, client, outcome.user, grant, sessionInput.id);
}
