import { timingSafeEqualText } from "../../../shared/crypto/compare";
import { OAuthError } from "../../../shared/errors";
import type { ClientRecord } from "../../../shared/schemas/clients";
import { redeemCode } from "../../login/mfa/one-time-codes";
import { hashSecret } from "../../login/session";
import type { IssuedUserTokens } from "../tokens/user-tokens";
import { type GrantContext, invalidGrant } from "./context";
import { checkGrantCode, completeMfaGrant, MFA_OOB_PURPOSE, openMfaToken } from "./mfa-token";

/**
 * `http://auth0.com/oauth/grant-type/mfa-oob`: the `mfa_token`, the `oob_code` POST /mfa/challenge answered
 * and, as `binding_code`, the code texted to the user's phone. The texted code is the newest of the token,
 * counted (3 guesses) and consumed once, and checked under the user's MFA lock; the `oob_code` must be the
 * one that code was sent with.
 */
export async function mfaOobGrant(ctx: GrantContext, client: ClientRecord): Promise<IssuedUserTokens & { refresh_token?: string }> {
  const { c, params } = ctx;
  const opened = await openMfaToken(c, ctx.config, client, params.mfa_token);
  // Only SMS is offered out of band here: its code must be typed back (no push to poll).
  if (!params.binding_code) throw new OAuthError("invalid_request", "Missing required parameter: binding_code");
  const phone = opened.usable.phone;
  if (!phone) throw invalidGrant(client, "User is not enrolled with SMS");
  const oobHash = await hashSecret(params.oob_code ?? "");
  const typed = params.binding_code.replace(/\s/g, "");
  await checkGrantCode(c, client, opened.user, "sms", "Invalid binding_code.", async () => {
    const data = await redeemCode(c, MFA_OOB_PURPOSE, opened.id, client.client_id, typed);
    return data && (await timingSafeEqualText(String(data.oob_hash ?? ""), oobHash)) ? true : "invalid";
  });
  return completeMfaGrant(ctx, client, opened, "sms", phone.id);
}
