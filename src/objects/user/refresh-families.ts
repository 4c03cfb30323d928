import type {
  ListPage,
  ListWindow,
  NewRefreshToken,
  RefreshLifetimes,
  RefreshRevocationFilter,
  RefreshRotation,
  RefreshTokenRecord,
  RotateOutcome,
} from "../../shared/types";
import { iso, json, type Sql, type SqlValue } from "../sql";

/**
 * Refresh-token families in the user's own object (ARCHITECTURE.md §2, SPEC §2.8, §3.3): every rotation,
 * reuse check and family revocation of one user is serialized here, never on the tenant. Each function runs
 * inside the caller's `transactionSync`.
 */

type Row = Record<string, SqlValue>;

/** The reference platform keeps at most this many live refresh tokens per user and application. */
export const MAX_LIVE_TOKENS_PER_CLIENT = 200;

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** The earlier of two optional times. */
const earliestOf = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

/** Constant-time comparison of two hash strings (both fixed-length digests). */
function sameHash(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

/** A row as the API and the grant see it: never token_hash, family_id, rotated_to or rotated_at. */
export function toRefreshToken(r: Row): RefreshTokenRecord {
  return {
    id: String(r.id),
    user_id: String(r.user_id),
    client_id: String(r.client_id),
    session_id: (r.session_id as string | null) ?? null,
    scope: String(r.scope ?? ""),
    audience: (r.audience as string | null) ?? null,
    login: json(r.login as string, {}),
    device: json(r.device as string, {}),
    created_at: iso(num(r.created_at)) as string,
    expires_at: iso(num(r.expires_at)),
    idle_expires_at: iso(num(r.idle_expires_at)),
    last_exchanged_at: iso(num(r.last_exchanged_at)),
    revoked_at: iso(num(r.revoked_at)),
    metadata: json(r.metadata as string, {}),
  };
}

/** Why a family was not started: its session ended first, or its code was replayed first. */
export type IssueRefusal = "session_ended" | "code_replayed";

/**
 * Stores a new family's first token, unless its session ended or its code was replayed before it got here.
 * Beyond MAX_LIVE_TOKENS_PER_CLIENT live tokens for this client the oldest families are revoked (the
 * reference platform's cap).
 */
export function issueRefreshToken(sql: Sql, t: NewRefreshToken, now: number): RefreshTokenRecord | IssueRefusal {
  // The session ended (its cascade reached this object first): no family may start under it.
  if (t.session_id !== null && sql.first`SELECT 1 FROM ended_sessions WHERE session_id = ${t.session_id}`) return "session_ended";
  // Its code was replayed before this issue (see `refuseFamily`): the family is born revoked, so never born.
  if (sql.first`SELECT 1 FROM refused_families WHERE family_id = ${t.id}`) return "code_replayed";
  const expiresAt = t.lifetime_ms === null ? null : now + t.lifetime_ms;
  const idleExpires = idleExpiry(now, t.idle_lifetime_ms, expiresAt);
  sql.run`INSERT INTO refresh_tokens (id, token_hash, family_id, client_id, user_id, session_id, scope, audience, login,
      device, expires_at, idle_lifetime_ms, idle_expires_at, created_at)
    VALUES (${t.id}, ${t.token_hash}, ${t.id}, ${t.client_id}, ${t.user_id}, ${t.session_id}, ${t.scope}, ${t.audience},
      ${t.login}, ${t.device}, ${expiresAt}, ${t.idle_lifetime_ms}, ${idleExpires}, ${now})`;
  const over = sql.all<{ family_id: string }>`SELECT family_id FROM refresh_tokens
    WHERE client_id = ${t.client_id} AND revoked_at IS NULL AND rotated_to IS NULL
    ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ${MAX_LIVE_TOKENS_PER_CLIENT}`;
  for (const { family_id } of over) revokeFamily(sql, family_id, now);
  return getRefreshToken(sql, t.id) as RefreshTokenRecord;
}
function idleExpiry(now: number, idleMs: number | null, expiresAt: number | null): number | null {
  if (idleMs === null) return null;
  return expiresAt === null ? now + idleMs : Math.min(now + idleMs, expiresAt);
}

export function getRefreshToken(sql: Sql, id: string): RefreshTokenRecord | null {
  const row = sql.first<Row>`SELECT * FROM refresh_tokens WHERE id = ${id}`;
  return row ? toRefreshToken(row) : null;
}

/**
 * The refresh grant's one step (RFC 9700 §4.14.2, SPEC §3.3). Rotates the presented token to a successor
 * that keeps the family's absolute expiry and slides the idle window. The immediately previous token is
 * tolerated within the client's leeway and answers the same successor (the worker re-derives its secret);
 * any other reuse revokes the whole family. A token presented by another client, or unknown, is refused
 * without touching anything.
 */
export function rotateRefreshToken(
  sql: Sql,
  r: RefreshRotation,
  lifetimes: RefreshLifetimes,
  now: number,
  /** Told of the successor's expiry when it is earlier than the predecessor's (or the first one): see cleanup.ts. */
  onEarlierExpiry: (at: number) => void = () => {},
): RotateOutcome {
  const row = sql.first<Row>`SELECT * FROM refresh_tokens WHERE id = ${r.id}`;
  if (!row || !sameHash(String(row.token_hash), r.token_hash)) return { ok: false, reason: "unknown" };
  if (row.client_id !== r.client_id) return { ok: false, reason: "client_mismatch" };
  // RFC 9449 §5: a family bound to a DPoP key is used only with a proof of that key; refused before reuse
  // detection, so whoever holds the token without the key can neither use it nor revoke its family.
  const bound = json<{ dpop_jkt?: unknown }>(row.login as string, {}).dpop_jkt;
  if (typeof bound === "string" && bound !== r.dpop_jkt) return { ok: false, reason: "dpop_mismatch" };
  if (row.revoked_at !== null) return { ok: false, reason: "revoked" };
  // Every token of this client was revoked after this family started (a client-wide revocation is recorded
  // once on the client, and each family meets it here, at its next use): the whole family goes.
  if (r.revoked_before && familyStart(sql, String(row.family_id)) < r.revoked_before) {
    revokeFamily(sql, String(row.family_id), now);
    return { ok: false, reason: "revoked" };
  }
  // SPEC §3.3: a client switched to non-expiring drops inherited expiries, at the token's next use.
  const expiresAt = lifetimes.absolute_infinite ? null : num(row.expires_at);
  const idleLifetime = lifetimes.idle_infinite ? null : (lifetimes.idle_lifetime_ms ?? num(row.idle_lifetime_ms));
  const idleExpiresAt = lifetimes.idle_infinite ? null : num(row.idle_expires_at);
  if ((expiresAt !== null && expiresAt <= now) || (idleExpiresAt !== null && idleExpiresAt <= now)) {
    return { ok: false, reason: "expired" };
  }
  if (row.rotated_to !== null) {
    const successor = sql.first<Row>`SELECT * FROM refresh_tokens WHERE id = ${row.rotated_to}`;
    const tolerated =
      successor &&
      successor.rotated_to === null &&
      successor.revoked_at === null &&
      r.leeway_ms > 0 &&
      now - Number(row.rotated_at) <= r.leeway_ms;
    if (!tolerated) {
      revokeFamily(sql, String(row.family_id), now);
      return { ok: false, reason: "reused" };
    }
    const wider = widerScopes(successor, r.scope);
    if (wider.length) return { ok: false, reason: "invalid_scope", wider };
    return { ok: true, token: toRefreshToken(successor), replay: true };
  }
  // Checked after reuse detection (a replayed token never escapes it by asking for more) and before any write.
  const wider = widerScopes(row, r.scope);
  if (wider.length) return { ok: false, reason: "invalid_scope", wider };
  if (r.check_only) return { ok: true, token: toRefreshToken(row), replay: false };
  // The successor is built here from the row already read: INSERT ... SELECT ... RETURNING would read the
  // row again and stage the returned one in a temporary table.
  const successor: Row = {
    ...row,
    id: r.successor_id,
    device: JSON.stringify({ ...json(row.device as string, {}), ...r.device }),
    expires_at: expiresAt,
    idle_lifetime_ms: idleLifetime,
    idle_expires_at: idleExpiry(now, idleLifetime, expiresAt),
    last_exchanged_at: now,
    rotated_to: null,
    rotated_at: null,
  };
  // The family's metadata travels with it (the reference platform keeps refresh_token_metadata across exchanges).
  sql.run`INSERT INTO refresh_tokens (id, token_hash, family_id, client_id, user_id, session_id, scope, audience, login,
      device, metadata, expires_at, idle_lifetime_ms, idle_expires_at, last_exchanged_at, created_at)
    VALUES (${successor.id}, ${r.successor_hash}, ${row.family_id}, ${row.client_id}, ${row.user_id}, ${row.session_id},
      ${row.scope}, ${row.audience}, ${row.login}, ${successor.device}, ${row.metadata}, ${successor.expires_at}, ${idleLifetime},
      ${successor.idle_expires_at}, ${now}, ${row.created_at})`;
  sql.run`UPDATE refresh_tokens SET rotated_to = ${r.successor_id}, rotated_at = ${now}, last_exchanged_at = ${now}
    WHERE id = ${r.id}`;
  // The alarm already covers the predecessor's expiry; only an earlier (or a first) expiry needs it moved.
  const before = earliestOf(num(row.expires_at), num(row.idle_expires_at));
  const after = earliestOf(num(successor.expires_at), num(successor.idle_expires_at));
  if (after !== null && (before === null || after < before)) onEarlierExpiry(after);
  return { ok: true, token: toRefreshToken(successor), replay: false };
}

/** When a family started: its first token's issue (rotated predecessors are kept until the family expires). */
function familyStart(sql: Sql, familyId: string): number {
  return Number(sql.first<{ at: number }>`SELECT MIN(created_at) AS at FROM refresh_tokens WHERE family_id = ${familyId}`?.at ?? 0);
}

/** The asked scopes a token does not hold (none when the request names no scope). */
function widerScopes(row: Row, asked: string[] | null | undefined): string[] {
  if (!asked) return [];
  const held = new Set(String(row.scope ?? "").split(" "));
  return asked.filter((s) => !held.has(s));
}

/** Revokes every token of a family (reuse detection, RFC 7009 revocation, DELETE of one token). */
export function revokeFamily(sql: Sql, familyId: string, now: number): number {
  return sql.run`UPDATE refresh_tokens SET revoked_at = ${now} WHERE family_id = ${familyId} AND revoked_at IS NULL`;
}

/** Revokes the family a token belongs to; false when the token is unknown. */
export function revokeFamilyOf(sql: Sql, id: string, now: number): boolean {
  const row = sql.first<{ family_id: string }>`SELECT family_id FROM refresh_tokens WHERE id = ${id}`;
  if (!row) return false;
  revokeFamily(sql, row.family_id, now);
  return true;
}

/**
 * A replayed authorization code (RFC 6749 §4.1.2): revokes the family its first redemption issued, or, when
 * that issue has not reached this object yet, refuses the family's id so it is never issued.
 */
export function refuseFamily(sql: Sql, familyId: string, now: number): boolean {
  if (revokeFamilyOf(sql, familyId, now)) return true;
  sql.run`INSERT INTO refused_families (family_id, refused_at) VALUES (${familyId}, ${now}) ON CONFLICT (family_id) DO NOTHING`;
  return false;
}

/** RFC 7009 §2.1: a presented token revokes its family, only for the client it was issued to. */
export function revokePresentedFamily(sql: Sql, p: { id: string; token_hash: string; client_id: string }, now: number): boolean {
  const row = sql.first<Row>`SELECT family_id, token_hash, client_id FROM refresh_tokens WHERE id = ${p.id}`;
  if (!row || !sameHash(String(row.token_hash), p.token_hash) || row.client_id !== p.client_id) return false;
  revokeFamily(sql, String(row.family_id), now);
  return true;
}

/** SPEC §3.3: DELETE /refresh-tokens/{id} revokes the rest of the family first, then deletes the row. */
export function deleteRefreshToken(sql: Sql, id: string, now: number): boolean {
  if (!revokeFamilyOf(sql, id, now)) return false;
  sql.run`DELETE FROM refresh_tokens WHERE id = ${id}`;
  return true;
}

/**
 * Revokes the family of each named token (POST /refresh-tokens/revoke with `ids`); unknown ids are passed
 * over, as the reference platform accepts the request without reporting them. Returns how many were found.
 */
export function revokeFamiliesOf(sql: Sql, ids: readonly string[], now: number): number {
  let found = 0;
  for (const id of ids) if (revokeFamilyOf(sql, id, now)) found++;
  return found;
}

/**
 * Soft-revokes the user's tokens of one client (and audience, when named): POST /refresh-tokens/revoke with
 * `user_id` + `client_id` [+ `audience`]. Every row of a family shares its client and audience, so whole
 * families are revoked and none can rotate again. With no filter, every token (as revokeAllRefreshTokens).
 */
export function revokeMatching(sql: Sql, filter: RefreshRevocationFilter, now: number): number {
  const clientId = filter.client_id ?? null;
  const audience = filter.audience ?? null;
  return sql.run`UPDATE refresh_tokens SET revoked_at = ${now}
    WHERE revoked_at IS NULL
      AND (${clientId} IS NULL OR client_id = ${clientId})
      AND (${audience} IS NULL OR audience = ${audience})`;
}

/**
 * Replaces the metadata of a token's family (PATCH /refresh-tokens/{id}); `{}` clears it. Every row of the
 * family is written so the live head and any id read earlier agree. Null when the token is unknown or
 * revoked (a revoked family never rotates again; its metadata is history).
 */
export function setRefreshTokenMetadata(sql: Sql, id: string, metadata: Record<string, string>): RefreshTokenRecord | null {
  const row = sql.first<{ family_id: string; revoked_at: number | null }>`SELECT family_id, revoked_at FROM refresh_tokens WHERE id = ${id}`;
  if (!row || row.revoked_at !== null) return null;
  sql.run`UPDATE refresh_tokens SET metadata = ${JSON.stringify(metadata)} WHERE family_id = ${row.family_id}`;
  return getRefreshToken(sql, id);
}

/** Soft-revokes every token of the user (DELETE /users/{id}/refresh-tokens). */
export function revokeAllRefreshTokens(sql: Sql, now: number): number {
  return sql.run`UPDATE refresh_tokens SET revoked_at = ${now} WHERE revoked_at IS NULL`;
}

/**
 * Revokes every token issued under one of the given sessions (session revocation, blocking the user), and
 * remembers the sessions as ended so no token is issued under them afterwards (see `issueRefreshToken`).
 */
export function revokeBySessions(sql: Sql, sessionIds: readonly string[], now: number): number {
  let revoked = 0;
  for (const id of sessionIds) {
    revoked += sql.run`UPDATE refresh_tokens SET revoked_at = ${now} WHERE session_id = ${id} AND revoked_at IS NULL`;
  }
  recordEndedSessions(sql, sessionIds, now);
  return revoked;
}

/** Remembers sessions as ended: no refresh family may start under them (see `issueRefreshToken`). */
export function recordEndedSessions(sql: Sql, sessionIds: readonly string[], now: number): void {
  for (const id of sessionIds) sql.run`INSERT INTO ended_sessions (session_id, ended_at) VALUES (${id}, ${now}) ON CONFLICT (session_id) DO NOTHING`;
}

/** How long an ended session (or a refused family) is remembered: far longer than an authorization code lives. */
export const ENDED_SESSION_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Forgets ended sessions and refused families past their retention (alarm cleanup). */
export function forgetEndedSessions(sql: Sql, now: number): number {
  const before = now - ENDED_SESSION_RETENTION_MS;
  return sql.run`DELETE FROM ended_sessions WHERE ended_at <= ${before}` + sql.run`DELETE FROM refused_families WHERE refused_at <= ${before}`;
}

/** When the oldest remembered ended session or refused family is due for removal, or null. */
export function nextEndedSessionExpiry(sql: Sql): number | null {
  const at = sql.first<{ at: number | null }>`SELECT MIN(at) AS at FROM (SELECT MIN(ended_at) AS at FROM ended_sessions UNION ALL SELECT MIN(refused_at) FROM refused_families)`?.at ?? null;
  return at === null ? null : at + ENDED_SESSION_RETENTION_MS;
}

/**
 * The user's current tokens, newest first: the live head of each family (rotated predecessors are history,
 * not tokens a person holds), plus soft-revoked ones so `revoked_at` stays visible. `client_id` narrows them
 * to one application (GET /refresh-tokens?client_id=). One user's rows, scanned: see user/0010.
 */
export function listRefreshTokens(sql: Sql, window: ListWindow, filter: { client_id?: string } = {}): ListPage<RefreshTokenRecord> {
  const clientId = filter.client_id ?? null;
  if ("offset" in window) {
    const rows = sql.all<Row>`SELECT * FROM refresh_tokens WHERE rotated_to IS NULL AND (${clientId} IS NULL OR client_id = ${clientId})
      ORDER BY created_at DESC, id DESC LIMIT ${window.limit} OFFSET ${window.offset}`;
    const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM refresh_tokens
      WHERE rotated_to IS NULL AND (${clientId} IS NULL OR client_id = ${clientId})`?.n ?? 0;
    return { items: rows.map(toRefreshToken), total };
  }
  const after = window.after;
  const rows = sql.all<Row>`SELECT * FROM refresh_tokens
    WHERE rotated_to IS NULL
      AND (${clientId} IS NULL OR client_id = ${clientId})
      AND (${after?.createdAt ?? null} IS NULL OR (created_at, id) < (${after?.createdAt ?? 0}, ${after?.id ?? ""}))
    ORDER BY created_at DESC, id DESC LIMIT ${window.limit}`;
  return { items: rows.map(toRefreshToken), total: null };
}

/** A family head whose stored absolute or idle expiry has passed (a cleanup candidate). */
export interface ExpiredHead {
  id: string;
  family_id: string;
  client_id: string;
  expires_at: number | null;
  idle_expires_at: number | null;
}

/** Up to `limit` heads (the one unrotated token of a family) past a stored expiry (indexes of user/0004). */
export function expiredHeads(sql: Sql, now: number, limit: number): ExpiredHead[] {
  const absolute = sql.all<ExpiredHead>`SELECT id, family_id, client_id, expires_at, idle_expires_at FROM refresh_tokens
    WHERE rotated_to IS NULL AND expires_at IS NOT NULL AND expires_at <= ${now} LIMIT ${limit}`;
  const idle = sql.all<ExpiredHead>`SELECT id, family_id, client_id, expires_at, idle_expires_at FROM refresh_tokens
    WHERE rotated_to IS NULL AND idle_expires_at IS NOT NULL AND idle_expires_at <= ${now} LIMIT ${limit}`;
  const byId = new Map([...absolute, ...idle].map((h) => [h.id, h]));
  return [...byId.values()].slice(0, limit);
}

/**
 * Alarm cleanup (SPEC §8) of the given expired heads under the clients' current policy (`policy` answers
 * null for a client that no longer exists). A family whose head is expired *as the refresh grant would
 * judge it* goes whole; a family goes only with its head, because a rotated predecessor must stay while
 * the family lives, or presenting it would no longer revoke the family (RFC 9700 §4.14.2). A head that
 * is past a stored expiry its client has since made infinite keeps living, and the dropped expiry is
 * written now instead of at its next use (SPEC §3.3, exactly as `rotateRefreshToken` applies it).
 */
export function settleExpiredHeads(
  sql: Sql,
  heads: readonly ExpiredHead[],
  policy: (clientId: string) => RefreshLifetimes | null,
  now: number,
): { deleted: number; kept: number } {
  let deleted = 0;
  let kept = 0;
  for (const head of heads) {
    const current = sql.first<ExpiredHead>`SELECT id, family_id, client_id, expires_at, idle_expires_at FROM refresh_tokens
      WHERE id = ${head.id} AND rotated_to IS NULL`;
    if (!current) continue; // rotated meanwhile: its successor has its own expiry
    const lifetimes = policy(current.client_id);
    const absoluteOver = !lifetimes?.absolute_infinite && current.expires_at !== null && current.expires_at <= now;
    const idleOver = !lifetimes?.idle_infinite && current.idle_expires_at !== null && current.idle_expires_at <= now;
    if (!lifetimes || absoluteOver || idleOver) {
      sql.run`DELETE FROM refresh_tokens WHERE family_id = ${current.family_id}`;
      deleted++;
      continue;
    }
    sql.run`UPDATE refresh_tokens SET
        expires_at = CASE WHEN ${lifetimes.absolute_infinite} = 1 THEN NULL ELSE expires_at END,
        idle_expires_at = CASE WHEN ${lifetimes.idle_infinite} = 1 THEN NULL ELSE idle_expires_at END
      WHERE id = ${current.id}`;
    kept++;
  }
  return { deleted, kept };
}

/** When the next family head expires (absolute or idle), or null (indexes of migration user/0004). */
export function nextHeadExpiry(sql: Sql): number | null {
  const absolute = sql.first<{ at: number | null }>`SELECT MIN(expires_at) AS at FROM refresh_tokens
    WHERE rotated_to IS NULL AND expires_at IS NOT NULL`?.at ?? null;
  const idle = sql.first<{ at: number | null }>`SELECT MIN(idle_expires_at) AS at FROM refresh_tokens
    WHERE rotated_to IS NULL AND idle_expires_at IS NOT NULL`?.at ?? null;
  const times = [absolute, idle].filter((t): t is number => t !== null);
  return times.length ? Math.min(...times) : null;
}
