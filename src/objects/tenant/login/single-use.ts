import type { AuditContext, CodeRedemption, NewAuthorizationCode, RedeemedCode } from "../../../shared/types";
import { LOG_TYPES } from "../core/audit";
import { emitAudit, type WriteTx } from "../core/events";
import { json, type Sql } from "../../sql";
import { TenantRpc } from "../core/rpc";
import { permissionNames } from "../roles/user-authorization";
import { getUser } from "../users/users";

/**
 * Single-use artifacts (ARCHITECTURE.md §5): authorization codes, client-assertion jtis, login tickets and
 * revoked access tokens. Each is consumed by one conditional statement, never check-then-set.
 */

export function createAuthorizationCode(sql: Sql, code: NewAuthorizationCode, now: number): void {
  sql.run`INSERT INTO authorization_codes (code_hash, client_id, user_id, session_id, redirect_uri, grant,
      code_challenge, code_challenge_method, expires_at, created_at)
    VALUES (${code.code_hash}, ${code.client_id}, ${code.user_id}, ${code.session_id}, ${code.redirect_uri},
      ${code.grant}, ${code.code_challenge}, ${code.code_challenge_method}, ${code.expires_at}, ${now})`;
}

/** The longest access-token lifetime an API can configure (30 days), in milliseconds. */
const MAX_ACCESS_TOKEN_LIFETIME_MS = 2_592_000_000;

export type CodeOutcome =
  | { ok: true; code: RedeemedCode }
  | { ok: false; reason: "consumed"; user_id: string; access_jti: string | null }
  | { ok: false; reason: "unknown" | "expired" | "client_mismatch" | "redirect_mismatch" | "pkce_mismatch" };

/**
 * Consumes a code exactly once, and only if every condition holds: right client, same redirect_uri, PKCE
 * verifier matching the challenge. A code refused for a mismatch stays redeemable by its rightful caller.
 * A redeemed code comes back with its user and the user's permissions on the code's audience (RBAC), so
 * the token endpoint needs no second round trip.
 */
export function consumeAuthorizationCode(sql: Sql, r: CodeRedemption, now: number): CodeOutcome {
  const row = sql.first<Record<string, unknown>>`
    UPDATE authorization_codes SET consumed_at = ${now}, access_jti = ${r.access_jti}
    WHERE code_hash = ${r.code_hash} AND consumed_at IS NULL AND expires_at > ${now}
      AND client_id = ${r.client_id}
      AND (${r.redirect_uri} IS NULL OR redirect_uri = ${r.redirect_uri})
      AND (code_challenge IS NULL
        OR (code_challenge_method = 'S256' AND code_challenge = ${r.verifier_s256})
        OR (code_challenge_method = 'plain' AND code_challenge = ${r.verifier_plain}))
    RETURNING client_id, user_id, session_id, redirect_uri, grant`;
  if (row) {
    const grant = json<RedeemedCode["grant"]>(row.grant as string, { scope: "", auth_time: 0 });
    const userId = String(row.user_id);
    return {
      ok: true,
      code: {
        client_id: String(row.client_id),
        user_id: userId,
        session_id: (row.session_id as string | null) ?? null,
        redirect_uri: String(row.redirect_uri),
        grant,
        user: getUser(sql, userId),
        permissions: grant.audience ? permissionNames(sql, userId, grant.audience, grant.organization ?? null) : [],
      },
    };
  }
  const existing = sql.first<Record<string, unknown>>`SELECT * FROM authorization_codes WHERE code_hash = ${r.code_hash}`;
  if (!existing) return { ok: false, reason: "unknown" };
  if (existing.consumed_at !== null) {
    // RFC 6749 §4.1.2: a code used twice SHOULD revoke what it issued. The token's exact expiry is the
    // worker's business; revoking for the longest lifetime an access token can have is always enough.
    if (typeof existing.access_jti === "string") revokeRedeemedAccessToken(sql, existing.access_jti, Number(existing.consumed_at), now);
    const jti = typeof existing.access_jti === "string" ? existing.access_jti : null;
    return { ok: false, reason: "consumed", user_id: String(existing.user_id), access_jti: jti };
  }
  if (Number(existing.expires_at) <= now) return { ok: false, reason: "expired" };
  if (existing.client_id !== r.client_id) return { ok: false, reason: "client_mismatch" };
  if (r.redirect_uri !== null && existing.redirect_uri !== r.redirect_uri) return { ok: false, reason: "redirect_mismatch" };
  return { ok: false, reason: "pkce_mismatch" };
}

/**
 * Revokes the access token a code's first redemption issued (RFC 6749 §4.1.2, a replay). The token's exact expiry
 * is the worker's business; revoking for the longest lifetime an access token can have is always enough.
 */
export function revokeRedeemedAccessToken(sql: Sql, jti: string, redeemedAt: number, now: number): void {
  revokeAccessToken(sql, jti, redeemedAt + MAX_ACCESS_TOKEN_LIFETIME_MS, now);
}

/** A code exchange's log event: `seacft` when it was redeemed, `feacft` with the reason when it was refused. */
export function emitCodeExchange(tx: WriteTx, audit: AuditContext, ok: boolean, clientId: string, userId: string | null, reason?: string): void {
  emitAudit(tx, audit, {
    event_type: ok ? "token.code_exchanged" : "token.code_exchange_failed",
    log_type: ok ? LOG_TYPES.codeExchange : LOG_TYPES.codeExchangeFailed,
    category: "api",
    description: ok ? "Authorization Code for Access Token" : `Failed exchange of Authorization Code: ${reason}`,
    client_id: clientId,
    user_id: userId,
  });
}

/** {@link consumeAuthorizationCode} in a write, with its `seacft` / `feacft` event in the same commit. */
export function consumeAuthorizationCodeLogged(tx: WriteTx, redemption: CodeRedemption, audit: AuditContext): CodeOutcome {
  const outcome = consumeAuthorizationCode(tx.sql, redemption, tx.now);
  emitCodeExchange(tx, audit, outcome.ok, redemption.client_id, outcome.ok ? outcome.code.user_id : null, outcome.ok ? undefined : outcome.reason);
  return outcome;
}

/** Records a client assertion's jti; false when it was already used (replay). */
export function consumeAssertionJti(sql: Sql, clientId: string, jti: string, expiresAt: number, now: number): boolean {
  sql.run`DELETE FROM client_assertion_jtis WHERE expires_at <= ${now}`;
  return sql.run`INSERT OR IGNORE INTO client_assertion_jtis (client_id, jti, expires_at) VALUES (${clientId}, ${jti}, ${expiresAt})` > 0;
}

export function createLoginTicket(
  sql: Sql,
  ticket: { ticket_hash: string; client_id: string; user_id: string; expires_at: number },
  now: number,
): void {
  sql.run`INSERT INTO login_tickets (ticket_hash, client_id, user_id, expires_at, created_at)
    VALUES (${ticket.ticket_hash}, ${ticket.client_id}, ${ticket.user_id}, ${ticket.expires_at}, ${now})`;
}

/** Consumes a login ticket for its client, exactly once; returns the user it authenticated. */
export function consumeLoginTicket(sql: Sql, ticketHash: string, clientId: string, now: number): string | null {
  const row = sql.first<{ user_id: string }>`
    UPDATE login_tickets SET consumed_at = ${now}
    WHERE ticket_hash = ${ticketHash} AND client_id = ${clientId} AND consumed_at IS NULL AND expires_at > ${now}
    RETURNING user_id`;
  return row?.user_id ?? null;
}

export function revokeAccessToken(sql: Sql, jti: string, expiresAt: number, now: number): void {
  sql.run`DELETE FROM revoked_access_tokens WHERE expires_at <= ${now}`;
  sql.run`INSERT OR IGNORE INTO revoked_access_tokens (jti, expires_at) VALUES (${jti}, ${expiresAt})`;
}

export function isAccessTokenRevoked(sql: Sql, jti: string): boolean {
  return sql.first`SELECT 1 FROM revoked_access_tokens WHERE jti = ${jti}` !== undefined;
}

/** Authorization codes (`stub.codes()`); their consumption stays a flat hot read-write on the object. */
export class Codes extends TenantRpc {
  create(code: NewAuthorizationCode): void {
    this.commit(({ sql, now }) => createAuthorizationCode(sql, code, now));
  }
}

/** Cross-origin login tickets (`stub.tickets()`); redeemed by `logins().redeemTicket`. */
export class Tickets extends TenantRpc {
  create(ticket: { ticket_hash: string; client_id: string; user_id: string; expires_at: number }): void {
    this.commit(({ sql, now }) => createLoginTicket(sql, ticket, now));
  }

}

/** Revoked access tokens (`stub.revocations()`). */
export class Revocations extends TenantRpc {
  revoke(jti: string, expiresAt: number): void {
    this.commit(({ sql, now }) => revokeAccessToken(sql, jti, expiresAt, now));
  }

  isRevoked(jti: string): boolean {
    return this.read((sql) => isAccessTokenRevoked(sql, jti));
  }
}

/** Client-assertion `jti`s (`stub.assertions()`), RFC 7523 §3 replay protection. */
export class Assertions extends TenantRpc {
  /** False when the jti was already used (replay). */
  consumeJti(clientId: string, jti: string, expiresAt: number): boolean {
    return this.commit(({ sql, now }) => consumeAssertionJti(sql, clientId, jti, expiresAt, now));
  }

  /**
   * A request object's `jti` (RFC 9101, src/worker/oauth/authorize/request-object.ts), kept beside the
   * client's assertion ids under its own prefix; false when it was already used.
   */
  consumeRequestObjectJti(clientId: string, jti: string, expiresAt: number): boolean {
    return this.commit(({ sql, now }) => consumeAssertionJti(sql, clientId, `request_object:${jti}`, expiresAt, now));
  }

}

/**
 * A DPoP proof's `jti` (RFC 9449 §11.1), remembered per key (its JWK thumbprint) for the proof's acceptance
 * window beside the client assertions' ids; false when the same key already used it. Each call also drops
 * at most two expired rows (one index step), so the table stays bounded by the proofs of one window whether
 * or not the sweep (login/cleanup.ts) has run.
 */
export function consumeDpopJti(sql: Sql, jkt: string, jti: string, expiresAt: number, now: number): boolean {
  sql.run`DELETE FROM client_assertion_jtis WHERE rowid IN (SELECT rowid FROM client_assertion_jtis WHERE expires_at <= ${now} LIMIT 2)`;
  const inserted = sql.run`INSERT OR IGNORE INTO client_assertion_jtis (client_id, jti, expires_at) VALUES (${`dpop:${jkt}`}, ${jti}, ${expiresAt})` > 0;
  if (inserted) return true;
  // A row past its expiry is a proof the window already refuses (iat); reclaim it for this one only if so.
  return sql.run`UPDATE client_assertion_jtis SET expires_at = ${expiresAt} WHERE client_id = ${`dpop:${jkt}`} AND jti = ${jti} AND expires_at <= ${now}` > 0;
}
