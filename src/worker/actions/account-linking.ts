import type { TenantConfig } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { UserRecord } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { tenantObject } from "../tenant/stubs";

/** `builtin` links by verified email inline; `template` only where an account-linking hook is bound; `off` never. */
export type UserLinkingMode = "builtin" | "template" | "off";

/**
 * The linking mode for a client (SPEC §6.2): its `user_linking_mode`, else the host's `userLinkingMode`
 * (createApp option, or `USER_LINKING_MODE`), else `builtin`.
 */
export function linkingMode(c: AppContext, client: ClientRecord): UserLinkingMode {
  const valid = (v: unknown): v is UserLinkingMode => v === "builtin" || v === "template" || v === "off";
  const own = client.extra.user_linking_mode;
  if (valid(own)) return own;
  const host = c.var.actionOptions?.userLinkingMode ?? (c.env as unknown as Record<string, unknown>).USER_LINKING_MODE;
  return valid(host) ? host : "builtin";
}

/**
 * Runs account linking for a login or a registration when the mode asks for it (the built-in path, or the
 * `account-linking` template bound to the trigger) and answers the user the flow continues as: the primary
 * when the account is, or was just, linked.
 */
export async function linkAccountFor(
  c: AppContext,
  config: TenantConfig,
  client: ClientRecord,
  user: UserRecord,
  trigger: "post-user-login" | "post-user-registration",
  /** Read with the login form (issue 31): when it says this user would not be linked, no commit is made. */
  hint?: { user_id: string; links: boolean },
): Promise<UserRecord> {
  const mode = linkingMode(c, client);
  const wanted = mode === "builtin" || (mode === "template" && (config.linkingTriggers ?? []).includes(trigger));
  if (!wanted) return user;
  if (hint && hint.user_id === user.user_id && !hint.links) return user;
  const actor = { type: "system" as const, id: null, client_id: client.client_id };
  const outcome = await tenantObject(c.env, c.var.tenant.id).accountLinking(auditContext(c, { actor })).linkByEmail(user.user_id);
  return outcome.user ?? user;
}
