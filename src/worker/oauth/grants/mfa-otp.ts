import { now } from "../../../shared/clock";
import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import type { ClientRecord } from "../../../shared/schemas/clients";
import { matchTotp } from "../../login/mfa/totp";
import { userObject } from "../../tenant/stubs";
import type { IssuedUserTokens } from "../tokens/user-tokens";
import { type GrantContext, invalidGrant } from "./context";
import { checkGrantCode, completeMfaGrant, openMfaToken } from "./mfa-token";

const WRONG = "Invalid otp_code.";

/**
 * `http://auth0.com/oauth/grant-type/mfa-otp`: the `mfa_token` of an `mfa_required` answer and a code of
 * the user's authenticator app. The code must match within about 30 seconds and not have been used before
 * (RFC 6238 §5.2, the same used-steps record as the login pages), under the user's MFA lock.
 */
export async function mfaOtpGrant(ctx: GrantContext, client: ClientRecord): Promise<IssuedUserTokens & { refresh_token?: string }> {
  const { c, params } = ctx;
  const opened = await openMfaToken(c, ctx.config, client, params.mfa_token);
  const totp = opened.usable.totp;
  if (!totp?.totp_secret_enc) throw invalidGrant(client, "User is not enrolled with an authenticator app");
  const secret = await (await fieldCipher(c.env.ENCRYPTION_KEY)).decrypt(totp.totp_secret_enc, encryptionContext.totpSecret(totp.id));
  const code = (params.otp ?? "").replace(/\s/g, "");
  await checkGrantCode(c, client, opened.user, "otp", WRONG, async () => {
    const step = await matchTotp(secret, code, now());
    if (step === null) return "invalid";
    return (await userObject(c.env, c.var.tenant.id, opened.user.user_id).mfa().consumeTotpStep(totp.id, step)) ? true : "reused";
  });
  return completeMfaGrant(ctx, client, opened, "otp", totp.id);
}
