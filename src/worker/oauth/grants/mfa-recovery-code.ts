import type { ClientRecord } from "../../../shared/schemas/clients";
import { auditContext } from "../../http/audit";
import { newRecoveryCodes, recoveryCodeHash } from "../../login/mfa/recovery-codes";
import { tenantObject } from "../../tenant/stubs";
import type { IssuedUserTokens } from "../tokens/user-tokens";
import { type GrantContext, invalidGrant } from "./context";
import { checkGrantCode, completeMfaGrant, openMfaToken } from "./mfa-token";

/**
 * `http://auth0.com/oauth/grant-type/mfa-recovery-code`: the `mfa_token` and one of the user's recovery
 * codes, used once under the user's MFA lock. As the reference platform's, the response carries a new
 * `recovery_code` that replaces the one used (the user keeps as many unused codes as before).
 */
export async function mfaRecoveryCodeGrant(ctx: GrantContext, client: ClientRecord): Promise<IssuedUserTokens & { refresh_token?: string; recovery_code: string }> {
  const { c, params } = ctx;
  const opened = await openMfaToken(c, ctx.config, client, params.mfa_token);
  if (!opened.usable.recovery) throw invalidGrant(client, "User has no recovery code");
  const [replacement = ""] = newRecoveryCodes();
  const [hash, newHash] = await Promise.all([recoveryCodeHash(params.recovery_code ?? ""), recoveryCodeHash(replacement)]);
  const audit = auditContext(c, { actor: { type: "user", id: opened.user.user_id, email: opened.user.email, client_id: client.client_id } });
  await checkGrantCode(c, client, opened.user, "recovery-code", "Invalid recovery code.", async () =>
    (await tenantObject(c.env, c.var.tenant.id).mfa(audit).swapRecoveryCode(opened.user.user_id, hash, newHash)) ? true : "invalid",
  );
  return { ...(await completeMfaGrant(ctx, client, opened, "recovery-code")), recovery_code: replacement };
}
