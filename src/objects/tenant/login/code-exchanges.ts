import type { CodeExchangeLog, CodeSubject } from "../../../shared/types";
import type { Sql } from "../../sql";
import type { WriteTx } from "../core/events";
import { TenantRpc } from "../core/rpc";
import { permissionNames } from "../roles/user-authorization";
import { toUserBase, type UserRow } from "../users/user-rows";
import { emitCodeExchange, revokeRedeemedAccessToken } from "./single-use";

/**
 * The tenant's part in the exchange of a sealed authorization code (issue 31). The code is no row here: it
 * carries its own facts, sealed by the worker, and its single use is serialized by one of the tenant's code
 * shards (src/objects/codes/code-object.ts). What stays the tenant's is what only it knows, read without a
 * write at the exchange ({@link codeSubject}: the user blocked or deleted since the code was issued, the
 * session the code was issued under revoked or ended, the user's permissions now), and the exchanges' log
 * rows, which the shards deliver in batches ({@link CodeExchanges.append}).
 */

/**
 * The one read of a sealed code's exchange: its user now, whether its session still exists, its permissions
 * now. The user's identities are left empty: nothing the exchange issues shows them (no post-login action runs
 * at an exchange), so the row is read by its key alone (as getUserWithoutIdentities reads it: a linked secondary
 * account answers no user).
 */
export function codeSubject(sql: Sql, userId: string, sessionId: string | null, audience: string | null, organization: string | null): CodeSubject {
  // One statement for the user's row and the session's (stop 33: was two); a session asked of a user who is
  // gone answers nothing (the exchange refuses that user first).
  const row = sql.first<UserRow & { session_live_: number | null }>`SELECT u.*, (SELECT 1 FROM sessions s WHERE s.id = ${sessionId} AND s.user_id = u.user_id) AS session_live_
    FROM users u WHERE u.user_id = ${userId}`;
  const base = row ? toUserBase(row) : null;
  const user = base && base.linked_to === null ? base : null;
  const session_live = sessionId === null || row?.session_live_ === 1;
  const permissions = user && audience ? permissionNames(sql, userId, audience, organization) : [];
  return { user, session_live, permissions };
}

/** The log rows of sealed codes' exchanges (`stub.codeExchanges(audit)`). */
export class CodeExchanges extends TenantRpc {
  /**
   * A code shard's batch of `seacft` events, each with the id, time and audit context of its redemption,
   * in one commit. By id: a batch delivered again (the shard crashed before it forgot the rows) writes
   * each row once (`INSERT OR IGNORE` in the logs table, `ON CONFLICT (id) DO NOTHING` in the outbox).
   */
  append(entries: CodeExchangeLog[]): number {
    return this.core.commit((tx) => {
      for (const entry of entries) {
        const sub: WriteTx = { ...tx, now: entry.at, emit: (event) => tx.emit({ ...event, id: entry.id }) };
        emitCodeExchange(sub, entry.audit, true, entry.client_id, entry.user_id);
      }
      return entries.length;
    });
  }

  /**
   * A refused exchange of a sealed code, with its `feacft` event. A replay (`reason` "consumed", RFC 6749
   * §4.1.2) also revokes the access token the first exchange issued; its refresh family lives in the user's
   * object, revoked by the worker.
   */
  refused(input: { client_id: string; user_id: string | null; reason: string; revoke?: { access_jti: string; redeemed_at: number } }): void {
    this.core.commit((tx) => {
      if (input.revoke) revokeRedeemedAccessToken(tx.sql, input.revoke.access_jti, input.revoke.redeemed_at, tx.now);
      emitCodeExchange(tx, this.audit, false, input.client_id, input.user_id, input.reason);
    });
  }
}
