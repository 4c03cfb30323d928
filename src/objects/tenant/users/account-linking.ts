import { ok, type Result } from "../../../shared/errors";
import type { UserRecord } from "../../../shared/schemas/users";
import { binaryOrder, type Sql } from "../../sql";
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

/** What linking by email decides for an account, before any write: `link` names the primary to link it into. */
type LinkDecision = { reason: "link"; primary: string } | { reason: Exclude<LinkingOutcome["reason"], "linked">; linkedTo?: string };

function decideLink(sql: Sql, userId: string, requireVerifiedEmail: boolean): LinkDecision {
  const u = sql.first<Account>`SELECT user_id, email, email_verified, linked_to, created_at FROM users WHERE user_id = ${userId}`;
  return decideLinkOf(sql, u, requireVerifiedEmail);
}

/** Creation order, ties by user id in SQLite's binary order (the order the linking's primary is chosen in). */
const olderThan = (a: Account, b: Account) => a.created_at < b.created_at || (a.created_at === b.created_at && binaryOrder(a.user_id, b.user_id) < 0);

/** {@link decideLink} for an account already read; `hasLinked`: whether accounts are linked to it, when known. */
function decideLinkOf(sql: Sql, u: Account | undefined, requireVerifiedEmail: boolean, hasLinked?: boolean): LinkDecision {
  if (!u) return { reason: "missing" };
  const userId = u.user_id;
  if (u.linked_to !== null) return { reason: "already_linked", linkedTo: u.linked_to };
  if (!u.email || (requireVerifiedEmail && u.email_verified !== 1)) return { reason: "unverified" };
  if (hasLinked ?? sql.first`SELECT 1 FROM users WHERE linked_to = ${userId} LIMIT 1`) return { reason: "primary" };
  // The oldest other primary account with this email. No ORDER BY (issue 31: its sorter cost a login ~10 µs
  // even over no row): an email has at most one account per connection, so the few rows are ordered here.
  const primary = sql
    .all<Account>`SELECT user_id, email, email_verified, linked_to, created_at FROM users
      WHERE email = ${u.email} AND user_id <> ${userId} AND linked_to IS NULL AND (email_verified = 1 OR ${requireVerifiedEmail ? 0 : 1} = 1)`
    .reduce<Account | undefined>((oldest, r) => (!oldest || olderThan(r, oldest) ? r : oldest), undefined);
  if (!primary) return { reason: "no_match" };
  if (olderThan(u, primary)) return { reason: "primary" };
  return { reason: "link", primary: primary.user_id };
}

/**
 * Whether {@link linkByEmail} would link this account now, read without a write (issue 31: the login form's
 * one read tells the worker that the usual answer, no link, needs no commit). Null for an already linked one.
 * The account comes read with its identities: its row is not read again, and the accounts linked to it are its
 * identities after the first.
 */
export function wouldLinkAccount(sql: Sql, account: UserRecord, requireVerifiedEmail = true): boolean | null {
  const row: Account = {
    user_id: account.user_id,
    email: account.email,
    email_verified: account.email_verified ? 1 : 0,
    linked_to: account.linked_to,
    created_at: Date.parse(account.created_at),
  };
  const decision = decideLinkOf(sql, row, requireVerifiedEmail, account.identities.length > 1);
  return decision.reason === "already_linked" ? null : decision.reason === "link";
}

export function linkByEmail(sql: Sql, userId: string, requireVerifiedEmail: boolean, now: number): LinkingOutcome {
  const decision = decideLink(sql, userId, requireVerifiedEmail);
  if (decision.reason === "missing") return { user: null, linked: false, reason: "missing" };
  if (decision.reason === "already_linked") return { user: getUser(sql, decision.linkedTo as string), linked: false, reason: "already_linked" };
  if (decision.reason !== "link") return { user: getUser(sql, userId), linked: false, reason: decision.reason };
  const bar = userId.indexOf("|");
  const result = linkAccount(sql, decision.primary, { provider: userId.slice(0, bar), user_id: userId.slice(bar + 1) }, now);
  if (!result.ok) return { user: getUser(sql, userId), linked: false, reason: "no_match" };
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
