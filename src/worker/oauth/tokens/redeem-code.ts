import type { CodeOutcome } from "../../../objects/tenant/login/single-use";
import { toBase64Url } from "../../../shared/crypto/encoding";
import { sha256 } from "../../../shared/crypto/compare";
import { randomId } from "../../../shared/crypto/random";
import type { CodeGrant, TenantConfig } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { UserRecord } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { hashSecret } from "../../login/session";
import type { Signer } from "../../tenant/keys";
import { tenantObject, userObject } from "../../tenant/stubs";
import { type IssuedUserTokens, issueUserTokens } from "./user-tokens";

/** Why a code was not redeemed: the object's reasons, a user who is gone, or a blocked user. */
export type RedemptionFailure = Extract<CodeOutcome, { ok: false }>["reason"] | "user_unavailable" | "user_blocked";

export interface CodeRedemptionInput {
  config: TenantConfig;
  /** The key that signs now for an algorithm (RS256 by default). */
  signer: (alg?: string) => Promise<Signer>;
  client: ClientRecord;
  code: string;
  /** The redirect URIs the request may stand for, tried in order while the only mismatch is the URI. */
  redirectUris: string[];
  verifier: string | null;
  /** RFC 9449: the DPoP key the access token is bound to. */
  dpopJkt?: string;
}

/**
 * Redeems an authorization code and issues its access and ID tokens: the one path shared by the token
 * endpoint's `authorization_code` grant and the /u2/info test-login page. The code is consumed by one
 * conditional update in the tenant object (client, redirect_uri and PKCE checked there), exactly once; a
 * refused attempt does not burn it. The access token's jti is stored with the code so a replay revokes it.
 */
export async function redeemCode(
  c: AppContext,
  input: CodeRedemptionInput,
): Promise<{ ok: true; tokens: IssuedUserTokens; code: RedeemedFacts } | { ok: false; reason: RedemptionFailure }> {
  const { client, verifier } = input;
  const stub = tenantObject(c.env, c.var.tenant.id);
  // The jti also names the refresh-token family this redemption may start, so a replay revokes both.
  const accessJti = randomId("", 22);
  const redemption = {
    access_jti: accessJti,
    code_hash: await hashSecret(input.code),
    client_id: client.client_id,
    verifier_s256: verifier === null ? null : toBase64Url(await sha256(verifier)),
    verifier_plain: verifier,
  };
  // Each attempt commits its `seacft` / `feacft` log event with the consumption (SPEC §2.10).
  const audit = auditContext(c, { actor: { type: "client", id: client.client_id, client_id: client.client_id } });
  let outcome: CodeOutcome = { ok: false, reason: "unknown" };
  for (const redirectUri of input.redirectUris) {
    outcome = await stub.consumeAuthorizationCode({ ...redemption, redirect_uri: redirectUri }, audit);
    if (outcome.ok || outcome.reason !== "redirect_mismatch") break;
  }
  if (!outcome.ok) {
    if (outcome.reason === "consumed" && outcome.access_jti) {
      // RFC 6749 §4.1.2: the object revoked the access token; the refresh family lives in the user's object.
      await userObject(c.env, c.var.tenant.id, outcome.user_id).refreshTokens().revokeFamily(refreshFamilyFor(outcome.access_jti));
    }
    return { ok: false, reason: outcome.reason };
  }
  const user = outcome.code.user;
  if (!user) return { ok: false, reason: "user_unavailable" };
  if (user.blocked) return { ok: false, reason: "user_blocked" };
  const tokens = await issueUserTokens({
    tenant: c.var.tenant,
    config: input.config,
    signer: await input.signer(),
    signerFor: input.signer,
    client,
    user,
    grant: outcome.code.grant,
    permissions: outcome.code.permissions,
    sessionId: outcome.code.session_id,
    withAccessToken: true,
    withIdToken: true,
    accessJti,
    controlPlaneTenantId: c.var.settings.controlPlaneTenantId,
    ...(input.dpopJkt ? { dpopJkt: input.dpopJkt } : {}),
  });
  const code = { user, grant: outcome.code.grant, sessionId: outcome.code.session_id, refreshFamilyId: refreshFamilyFor(accessJti) };
  return { ok: true, tokens, code };
}

/** What a redemption established, for a grant that goes on to start a refresh-token family. */
export interface RedeemedFacts {
  user: UserRecord;
  grant: CodeGrant;
  sessionId: string | null;
  refreshFamilyId: string;
}

const refreshFamilyFor = (accessJti: string) => `rt_${accessJti}`;
