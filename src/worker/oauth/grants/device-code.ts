import { OAuthError } from "../../../shared/errors";
import type { ClientRecord } from "../../../shared/schemas/clients";
import { DEVICE_CODE_GRANT } from "../../../shared/schemas/oauth";
import { hashSecret } from "../../login/session";
import { tenantObject } from "../../tenant/stubs";
import type { IssuedUserTokens } from "../tokens/user-tokens";
import { type GrantContext, invalidGrant } from "./context";
import { issueLoginTokens } from "./login-tokens";

/**
 * `urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4-3.5). One RPC reads and updates the device
 * request: pending (`authorization_pending`, or `slow_down` when polled faster than the interval, which then
 * grows by 5 s), refused (`access_denied`), expired (`expired_token`), or approved, in which case it is
 * consumed by the same commit and the login's tokens are issued exactly once; later polls are `invalid_grant`.
 */
export async function deviceCodeGrant(ctx: GrantContext, client: ClientRecord): Promise<IssuedUserTokens & { refresh_token?: string }> {
  const { c } = ctx;
  // The device grant is opt-in: an empty grant_types list (which allows the classic grants) does not allow it.
  if (!client.grant_types.includes(DEVICE_CODE_GRANT)) throw new OAuthError("unauthorized_client", `Grant type '${DEVICE_CODE_GRANT}' not allowed for the client.`);
  const stub = tenantObject(c.env, c.var.tenant.id);
  const poll = await stub.deviceCodes().poll(await hashSecret(ctx.params.device_code ?? ""), client.client_id);
  switch (poll.status) {
    case "pending":
      throw new OAuthError("authorization_pending", "The user has not yet approved the device");
    case "slow_down":
      throw new OAuthError("slow_down", `Polling too fast: wait ${poll.interval_s} seconds between requests`);
    case "denied":
      throw new OAuthError("access_denied", "The user refused the device", 400);
    case "expired":
      throw new OAuthError("expired_token", "The device code has expired");
    case "invalid":
      throw invalidGrant(client, "Invalid device code");
  }
  const user = await stub.users().get(poll.user_id);
  if (!user) throw invalidGrant(client, "The user no longer exists");
  // SPEC §7: a blocked user is refused on every grant that acts for them.
  if (user.blocked) throw invalidGrant(client, "user is blocked");
  return issueLoginTokens(ctx, client, user, poll.grant, poll.session_id ?? "");
}
