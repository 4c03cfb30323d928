import { mfaSmsText } from "../messaging/sms-templates";
import { now } from "../../shared/clock";
import { randomToken } from "../../shared/crypto/random";
import { OAuthError } from "../../shared/errors";
import { MFA_GRANTS } from "../../shared/schemas/oauth";
import type { AppContext } from "../context";
import { readOAuthParams } from "../http/body";
import { issueCode } from "../login/mfa/one-time-codes";
import { hashSecret } from "../login/session";
import { DeliveryError } from "../messaging/providers";
import { smsSender } from "../messaging/senders";
import { tenantConfig } from "../tenant/config-cache";
import { tenantConfigSource } from "../tenant/stubs";
import { authenticateClient, findClient, presentedClient } from "./client-auth";
import { MFA_OOB_PURPOSE, openMfaToken } from "./grants/mfa-token";

/**
 * POST /mfa/challenge (the reference platform's MFA API): after `mfa_required`, asks for a challenge of
 * one of the user's factors with the `mfa_token`. `otp` needs nothing sent (the app shows the code); `oob`
 * texts a code to the user's phone and answers the `oob_code` that the `mfa-oob` grant presents with the
 * texted code as `binding_code`. The client authenticates as at /oauth/token and must be allowed an MFA
 * grant; the token must be this client's and live. Nothing is consumed here: the grant consumes the token.
 */

/** SMS codes one MFA token may send. @default 5 */
export const MAX_SMS_PER_MFA_TOKEN = 5;

export async function mfaChallengeEndpoint(c: AppContext): Promise<Response> {
  const params = await readOAuthParams(c.req.raw);
  const config = await tenantConfig(c.var.tenant.id, tenantConfigSource(c.env, c.var.tenant.id), c.var.settings);
  const presented = presentedClient(c.req.raw, params);
  const client = findClient(config, presented.clientId);
  if (client.grant_types.length > 0 && !Object.values(MFA_GRANTS).some((g) => client.grant_types.includes(g))) {
    throw new OAuthError("unauthorized_client", "The client is not allowed an MFA grant.");
  }
  await authenticateClient(c, client, presented);
  const types = (params.challenge_type ?? "otp oob").split(" ").filter(Boolean);
  // The codes already texted under this token are counted in the token's own read, only when SMS may be asked.
  const window = types.includes("oob") ? { purpose: MFA_OOB_PURPOSE, since: now() - 15 * 60 * 1000 } : null;
  const opened = await openMfaToken(c, config, client, params.mfa_token, window);
  const wanted = params.authenticator_id;
  const usable = opened.usable;
  const noStore = { "Cache-Control": "no-store", Pragma: "no-cache" };
  if (types.includes("otp") && usable.totp && (!wanted || wanted === usable.totp.id)) return c.json({ challenge_type: "otp" }, 200, noStore);
  const phone = usable.phone?.phone_number;
  if (types.includes("oob") && phone && (!wanted || wanted === usable.phone?.id)) {
    if (opened.sent >= MAX_SMS_PER_MFA_TOKEN) {
      throw new OAuthError("too_many_requests", "Too many codes were sent for this mfa_token; start the login again", 429);
    }
    const sender = await smsSender(c, config);
    if (!sender) throw new OAuthError("temporarily_unavailable", "Text messages cannot be sent right now", 503);
    const oobCode = randomToken(24);
    const { code } = await issueCode(c, { purpose: MFA_OOB_PURPOSE, subject: opened.id, clientId: client.client_id, data: { oob_hash: await hashSecret(oobCode) } });
    const name = String(config.settings.friendly_name ?? client.name ?? config.tenantId);
    try {
      await sender.send({ to: phone, body: await mfaSmsText(c, "verification", code, name, opened.smsTemplates) });
    } catch (error) {
      console.warn("SMS delivery failed:", error instanceof DeliveryError ? error.message : error);
      throw new OAuthError("temporarily_unavailable", "Text messages cannot be sent right now", 503);
    }
    return c.json({ challenge_type: "oob", oob_code: oobCode, binding_method: "prompt" }, 200, noStore);
  }
  throw new OAuthError("unsupported_challenge_type", "The user is not enrolled with a factor of the requested challenge_type");
}
