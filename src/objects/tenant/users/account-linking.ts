import { ok, type Result } from "../../../shared/errors";
import type { UserRecord } from "../../../shared/schemas/users";
import type { Sql } from "../../sql";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";
import { linkAccount } from "./user-links";
import { getUser } from "./user-rows";

/**
 * The `account-linking` template (SPEC §6.2): links a user into the oldest other account with the same
 * verified email. Idempotent, and a no-op when the user is already linked (`linked_to` set), when its email
 * is unverified (by default), when it is already a primary (has linked accounts, or is itself the oldest),
 * or when no other account matches.
 */
export type LinkingOutcome = {
  /** The account the flow continues as: the primary when the user is (or was just) linked. */
  user: UserRecord | null;
  linked: boolean;
  reason: "linked" | "already_linked" | "unverified" | "primary" | "no_match" | "missing";
};

interface Account {
  user_id: string;
  email: string | null;
  email_verified: number;
  linked_to: string | null;
  created_at: number;
}

export function linkByEmail(sql: Sql, userId: string, requireVerifiedEmail: boolean, now: number): LinkingOutcome {
  const u = sql.first<Account>`SELECT user_id, email, email_verified, linked_to, created_at FROM users WHERE user_id = ${userId}`;
  if (!u) return { user: null, linked: false, reason: "missing" };
  if (u.linked_to !== null) return { user: getUser(sql, u.linked_to), linked: false, reason: "already_linked" };
  const self = getUser(sql, userId);
  if (!u.email || (requireVerifiedEmail && u.email_verified !== 1)) return { user: self, linked: false, reason: "unverified" };
  if (sql.first`SELECT 1 FROM users WHERE linked_to = ${userId} LIMIT 1`) return { user: self, linked: false, reason: "primary" };
  const primary = sql.first<Account>`SELECT user_id, email, email_verified, linked_to, created_at FROM users
    WHERE email = ${u.email} AND user_id <> ${userId} AND linked_to IS NULL AND (email_verified = 1 OR ${requireVerifiedEmail ? 0 : 1} = 1)
    ORDER BY created_at, user_id LIMIT 1`;
  if (!primary) return { user: self, linked: false, reason: "no_match" };
  if (primary.created_at > u.created_at || (primary.created_at === u.created_at && primary.user_id > userId)) {
    return { user: self, linked: false, reason: "primary" };
  }
  const bar = userId.indexOf("|");
  const result = linkAccount(sql, primary.user_id, { provider: userId.slice(0, bar), user_id: userId.slice(bar + 1) }, now);
  if (!result.ok) return { user: self, linked: false, reason: "no_match" };
  return { user: result.value.after, linked: true, reason: "linked" };
}

/** The account-linking facade (`stub.accountLinking(audit)`): one commit, with `user.updated` when it links. */
export class AccountLinking extends TenantRpc {
  linkByEmail(userId: string, requireVerifiedEmail = true): LinkingOutcome {
    return this.commit((tx) => {
      const outcome = linkByEmail(tx.sql, userId, requireVerifiedEmail, tx.now);
      const primary = outcome.user;
      if (outcome.linked && primary) {
        audited(tx, this.audit, ok(primary) as Result<UserRecord>, { entity: "user", action: "updated", id: primary.user_id, after: (p) => ({ identities: p.identities, linked: userId }) });
      }
      return outcome;
    });
  }
}
