import type { CodeOutcome } from "../../../objects/tenant/login/single-use";
import { toBase64Url } from "../../../shared/crypto/encoding";
import { sha256, timingSafeEqualText } from "../../../shared/crypto/compare";
import { randomId } from "../../../shared/crypto/random";
import type { CodeGrant, RedeemedCode, SealedCodeContent, SealedCodeRedemption, TenantConfig } from "../../../shared/types";
import { now } from "../../../shared/clock";
import { newEventId } from "../../../shared/event-id";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { UserRecord } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { hashSecret } from "../../login/session";
import type { Signer } from "../../tenant/keys";
import { codeShard, tenantObject, userObject } from "../../tenant/stubs";
import { isSealedCode, openCode } from "./sealed-code";
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
  if (isSealedCode(input.code)) return redeemSealedCode(c, input);
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
  return issueRedeemed(c, input, accessJti, outcome.code);
}

/** The tokens of a redeemed code, unless its user is gone or blocked (then the redemption is refused). */
async function issueRedeemed(
  c: AppContext,
  input: CodeRedemptionInput,
  accessJti: string,
  code: Pick<RedeemedCode, "user" | "grant" | "permissions" | "session_id">,
): Promise<{ ok: true; tokens: IssuedUserTokens; code: RedeemedFacts } | { ok: false; reason: RedemptionFailure }> {
  const user = code.user;
  if (!user) return { ok: false, reason: "user_unavailable" };
  if (user.blocked) return { ok: false, reason: "user_blocked" };
  const tokens = await issueUserTokens({
    tenant: c.var.tenant,
    config: input.config,
    signer: await input.signer(),
    signerFor: input.signer,
    client: input.client,
    user,
    grant: code.grant,
    permissions: code.permissions,
    sessionId: code.session_id,
    withAccessToken: true,
    withIdToken: true,
    accessJti,
    controlPlaneTenantId: c.var.settings.controlPlaneTenantId,
    ...(input.dpopJkt ? { dpopJkt: input.dpopJkt } : {}),
  });
  return { ok: true, tokens, code: { user, grant: code.grant, sessionId: code.session_id, refreshFamilyId: refreshFamilyFor(accessJti) } };
}

/** Why a sealed code does not fit this request, in the stored path's order; null when it does. */
async function mismatch(code: SealedCodeContent, input: CodeRedemptionInput): Promise<Exclude<RedemptionFailure, "consumed" | "unknown" | "user_unavailable" | "user_blocked"> | null> {
  if (code.expires_at <= now()) return "expired";
  if (code.client_id !== input.client.client_id) return "client_mismatch";
  if (!input.redirectUris.includes(code.redirect_uri)) return "redirect_mismatch";
  if (code.code_challenge === null) return null;
  const { verifier } = input;
  if (verifier === null) return "pkce_mismatch";
  const presented = code.code_challenge_method === "S256" ? toBase64Url(await sha256(verifier)) : verifier;
  return (await timingSafeEqualText(presented, code.code_challenge)) ? null : "pkce_mismatch";
}

/**
 * Redeems a sealed code (issue 31, sealed-code.ts): its facts are opened and checked here; its code shard
 * records its single use and its `seacft` event in one transaction (a code redeemed before answers
 * `consumed` whatever this attempt brings, and what it issued is revoked, RFC 6749 §4.1.2; a refused attempt
 * does not burn it); and the tenant object is read, not written: the user blocked or deleted since the code
 * was issued, the session it was issued under revoked or ended since (the stored path's cascade deleted such
 * codes), the permissions now. The shard and the read run side by side. A refusal commits its `feacft` event.
 */
async function redeemSealedCode(
  c: AppContext,
  input: CodeRedemptionInput,
): Promise<{ ok: true; tokens: IssuedUserTokens; code: RedeemedFacts } | { ok: false; reason: RedemptionFailure }> {
  const tenantId = c.var.tenant.id;
  const stub = tenantObject(c.env, tenantId);
  const audit = auditContext(c, { actor: { type: "client", id: input.client.client_id, client_id: input.client.client_id } });
  const refuse = async (reason: RedemptionFailure, userId: string | null, revoke?: { access_jti: string; redeemed_at: number }) => {
    await stub.codeExchanges(audit).refused({ client_id: input.client.client_id, user_id: userId, reason, ...(revoke ? { revoke } : {}) });
    return { ok: false as const, reason };
  };
  const code = await openCode(c.env.ENCRYPTION_KEY, tenantId, input.code);
  if (!code) return refuse("unknown", null);
  const wrong = await mismatch(code, input);
  const accessJti = randomId("", 22);
  const at = now();
  const redemption: SealedCodeRedemption = {
    id: code.id,
    user_id: code.user_id,
    expires_at: code.expires_at,
    consumable: wrong === null,
    access_jti: accessJti,
    log: { id: newEventId(at), at, client_id: input.client.client_id, user_id: code.user_id, audit },
  };
  const grant = code.grant;
  const [outcome, subject] = await Promise.all([
    codeShard(c.env, tenantId, code.id).redeem(redemption),
    wrong === null ? stub.codeSubject(code.user_id, code.session_id, grant.audience ?? null, grant.organization ?? null) : null,
  ]);
  if (!outcome.ok) {
    if (outcome.reason === "consumed") {
      // The first exchange's access token is revoked in the tenant, its refresh family in the user's object.
      await userObject(c.env, tenantId, outcome.user_id).refreshTokens().revokeFamily(refreshFamilyFor(outcome.access_jti));
      return refuse("consumed", null, { access_jti: outcome.access_jti, redeemed_at: outcome.redeemed_at });
    }
    return refuse(wrong ?? "unknown", null);
  }
  // Redeemed: its `seacft` event is the shard's. The grant still needs its user (checked first, as the stored
  // path does) and its session: a code whose session was revoked since is refused as the stored path's
  // cascade-deleted code was (unknown).
  if (!subject) return { ok: false, reason: "unknown" };
  if (subject.user && !subject.user.blocked && !subject.session_live) return { ok: false, reason: "unknown" };
  return issueRedeemed(c, input, accessJti, { user: subject.user, grant, permissions: subject.permissions, session_id: code.session_id });
}

/** What a redemption established, for a grant that goes on to start a refresh-token family. */
export interface RedeemedFacts {
  user: UserRecord;
  grant: CodeGrant;
  sessionId: string | null;
  refreshFamilyId: string;
}

const refreshFamilyFor = (accessJti: string) => `rt_${accessJti}`;
