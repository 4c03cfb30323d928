import type { CodeOutcome } from "../../../objects/tenant/single-use";
import { toBase64Url } from "../../../shared/crypto/encoding";
import { sha256 } from "../../../shared/crypto/compare";
import { randomToken } from "../../../shared/crypto/random";
import type { ClientRecord, TenantConfig } from "../../../shared/types";
import type { AppContext } from "../../context";
import { hashSecret } from "../../login/session";
import type { Signer } from "../../tenant/keys";
import { tenantObject } from "../../tenant/stubs";
import { type IssuedUserTokens, issueUserTokens } from "./user-tokens";

/** Why a code was not redeemed: the object's reasons, or a user who is blocked or gone. */
export type RedemptionFailure = Extract<CodeOutcome, { ok: false }>["reason"] | "user_unavailable";

export interface CodeRedemptionInput {
  config: TenantConfig;
  signer: () => Promise<Signer>;
  client: ClientRecord;
  code: string;
  /** The redirect URIs the request may stand for, tried in order while the only mismatch is the URI. */
  redirectUris: string[];
  verifier: string | null;
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
): Promise<{ ok: true; tokens: IssuedUserTokens } | { ok: false; reason: RedemptionFailure }> {
  const { client, verifier } = input;
  const stub = tenantObject(c.env, c.var.tenant.id);
  const accessJti = randomToken(16);
  const redemption = {
    access_jti: accessJti,
    code_hash: await hashSecret(input.code),
    client_id: client.client_id,
    verifier_s256: verifier === null ? null : toBase64Url(await sha256(verifier)),
    verifier_plain: verifier,
  };
  let outcome: CodeOutcome = { ok: false, reason: "unknown" };
  for (const redirectUri of input.redirectUris) {
    outcome = await stub.consumeAuthorizationCode({ ...redemption, redirect_uri: redirectUri });
    if (outcome.ok || outcome.reason !== "redirect_mismatch") break;
  }
  if (!outcome.ok) return { ok: false, reason: outcome.reason };
  const user = outcome.code.user;
  if (!user || user.blocked) return { ok: false, reason: "user_unavailable" };
  const tokens = await issueUserTokens({
    tenant: c.var.tenant,
    config: input.config,
    signer: await input.signer(),
    client,
    user,
    grant: outcome.code.grant,
    sessionId: outcome.code.session_id,
    withAccessToken: true,
    withIdToken: true,
    accessJti,
  });
  return { ok: true, tokens };
}
