import { equalDigests } from "../../../shared/crypto/compare";
import { utf8 } from "../../../shared/crypto/encoding";
import type { ChallengeRecord, DevMessage, Json, NewChallenge } from "../../../shared/types";
import { isMissingColumn, iso, json, type Sql } from "../../sql";
import { TenantRpc } from "../core/rpc";

/**
 * Short-lived single-use secrets (issue 12): SMS and email one-time codes and WebAuthn challenges. The worker
 * compares a presented code with the stored hash in constant time; the object counts attempts and consumes,
 * each with one conditional statement, so a code is accepted at most once and guessed a bounded number of
 * times even under concurrency.
 */

type Row = Record<string, unknown>;

function toChallenge(r: Row): ChallengeRecord {
  return {
    id: String(r.id),
    purpose: String(r.purpose),
    subject: String(r.subject),
    client_id: (r.client_id as string | null) ?? null,
    secret_hash: String(r.secret_hash),
    data: json(r.data as string, {}),
    attempts: Number(r.attempts),
    created_at: iso(r.created_at as number) as string,
    expires_at: iso(r.expires_at as number) as string,
  };
}

export function createChallenge(sql: Sql, challenge: NewChallenge, now: number): void {
  sql.run`DELETE FROM auth_challenges WHERE expires_at <= ${now}`;
  sql.run`INSERT INTO auth_challenges (id, purpose, subject, client_id, secret_hash, data, created_at, expires_at)
    VALUES (${challenge.id}, ${challenge.purpose}, ${challenge.subject}, ${challenge.client_id}, ${challenge.secret_hash},
      ${challenge.data}, ${now}, ${challenge.expires_at})`;
}

/**
 * Counts one attempt on the newest live challenge of a purpose and subject (for one client, when given) and
 * returns it, or null when there is none or it has used up its attempts. The attempt is counted before the
 * worker compares, so parallel guesses cannot exceed `maxAttempts`.
 */
export function attemptChallenge(sql: Sql, purpose: string, subject: string, clientId: string | null, maxAttempts: number, now: number): ChallengeRecord | null {
  const row = sql.first<Row>`UPDATE auth_challenges SET attempts = attempts + 1
    WHERE id = (SELECT id FROM auth_challenges WHERE purpose = ${purpose} AND subject = ${subject}
        AND (${clientId} IS NULL OR client_id = ${clientId}) AND consumed_at IS NULL AND expires_at > ${now}
        ORDER BY created_at DESC, id DESC LIMIT 1)
      AND attempts < ${maxAttempts}
    RETURNING *`;
  return row ? toChallenge(row) : null;
}

/**
 * A typed code's redemption in one step (issue 31: was an `attempt` commit, a compare in the worker and a
 * `consume` commit): the attempt is counted first (it stays counted whatever the answer), the stored hash is
 * compared with the typed code's in constant time, and a match consumes the code once. Answers its data, or
 * null for no live code, too many attempts, a wrong code or a concurrent winner.
 */
export function redeemChallenge(
  sql: Sql,
  purpose: string,
  subject: string,
  clientId: string | null,
  maxAttempts: number,
  typedHash: string,
  now: number,
): Record<string, Json> | null {
  const challenge = attemptChallenge(sql, purpose, subject, clientId, maxAttempts, now);
  if (!challenge || !equalDigests(utf8(challenge.secret_hash), utf8(typedHash))) return null;
  return consumeChallenge(sql, challenge.id, now) ? challenge.data : null;
}

/**
 * The challenge of a purpose and subject, live or not (the MFA token's lookup by hash: the worker tells an
 * expired token from an unknown one); null when there is none.
 */
export function findChallenge(sql: Sql, purpose: string, subject: string): ChallengeRecord | null {
  const row = sql.first<Row>`SELECT * FROM auth_challenges WHERE purpose = ${purpose} AND subject = ${subject} ORDER BY created_at DESC, id DESC LIMIT 1`;
  return row ? { ...toChallenge(row), consumed: row.consumed_at !== null } : null;
}

/** Consumes a challenge exactly once; false when it was already consumed (a concurrent winner) or expired. */
export function consumeChallenge(sql: Sql, id: string, now: number): boolean {
  return sql.run`UPDATE auth_challenges SET consumed_at = ${now} WHERE id = ${id} AND consumed_at IS NULL AND expires_at > ${now}` > 0;
}

/**
 * Consumes the live challenge of a purpose and subject whose secret hash matches (WebAuthn challenges, which
 * the browser echoes back in clientDataJSON): one conditional UPDATE, so a challenge serves one ceremony.
 */
export function consumeChallengeByHash(sql: Sql, purpose: string, subject: string, secretHash: string, now: number): ChallengeRecord | null {
  const row = sql.first<Row>`UPDATE auth_challenges SET consumed_at = ${now}
    WHERE purpose = ${purpose} AND subject = ${subject} AND secret_hash = ${secretHash} AND consumed_at IS NULL AND expires_at > ${now}
    RETURNING *`;
  return row ? toChallenge(row) : null;
}

/** How many challenges of a purpose and subject were created since `since` (resend limits). */
export function countChallenges(sql: Sql, purpose: string, subject: string, since: number): number {
  return sql.first<{ n: number }>`SELECT count(*) AS n FROM auth_challenges WHERE purpose = ${purpose} AND subject = ${subject} AND created_at > ${since}`?.n ?? 0;
}

/** The development sink keeps this many messages per tenant (newest). */
export const DEV_MESSAGES_KEPT = 200;

export function recordDevMessage(sql: Sql, message: Omit<DevMessage, "created_at">, now: number): void {
  try {
    sql.run`INSERT INTO dev_messages (id, channel, recipient, subject, body, sender, html, created_at)
      VALUES (${message.id}, ${message.channel}, ${message.recipient}, ${message.subject}, ${message.body},
        ${message.sender ?? null}, ${message.html ?? null}, ${now})`;
  } catch (error) {
    // A pinned tenant still at a schema before 0015 (expand/contract): the message without sender and HTML.
    if (!isMissingColumn(error, "sender") && !isMissingColumn(error, "html")) throw error;
    sql.run`INSERT INTO dev_messages (id, channel, recipient, subject, body, created_at)
      VALUES (${message.id}, ${message.channel}, ${message.recipient}, ${message.subject}, ${message.body}, ${now})`;
  }
  sql.run`DELETE FROM dev_messages WHERE id NOT IN (SELECT id FROM dev_messages ORDER BY created_at DESC, id DESC LIMIT ${DEV_MESSAGES_KEPT})`;
}

/** The newest messages, to one recipient when given (emails compared case-insensitively). */
export function listDevMessages(sql: Sql, recipient: string | null, limit: number): DevMessage[] {
  return sql.all<Row>`SELECT * FROM dev_messages WHERE (${recipient} IS NULL OR lower(recipient) = lower(${recipient}))
    ORDER BY created_at DESC, id DESC LIMIT ${limit}`.map((r) => ({
    id: String(r.id),
    channel: r.channel as DevMessage["channel"],
    recipient: String(r.recipient),
    subject: (r.subject as string | null) ?? null,
    body: String(r.body),
    sender: (r.sender as string | null) ?? null,
    html: (r.html as string | null) ?? null,
    created_at: iso(r.created_at as number) as string,
  }));
}

/** The challenges facade (`stub.challenges()`): not configuration, no audit events (login steps log their own). */
export class Challenges extends TenantRpc {
  create(challenge: NewChallenge): void {
    this.commit(({ sql, now }) => createChallenge(sql, challenge, now));
  }

  attempt(purpose: string, subject: string, clientId: string | null, maxAttempts: number): ChallengeRecord | null {
    return this.commit(({ sql, now }) => attemptChallenge(sql, purpose, subject, clientId, maxAttempts, now));
  }

  /** See {@link redeemChallenge}: one commit. */
  redeem(purpose: string, subject: string, clientId: string | null, maxAttempts: number, typedHash: string): Record<string, Json> | null {
    return this.commit(({ sql, now }) => redeemChallenge(sql, purpose, subject, clientId, maxAttempts, typedHash, now));
  }

  find(purpose: string, subject: string): ChallengeRecord | null {
    return this.read((sql) => findChallenge(sql, purpose, subject));
  }

  consume(id: string): boolean {
    return this.commit(({ sql, now }) => consumeChallenge(sql, id, now));
  }

  consumeByHash(purpose: string, subject: string, secretHash: string): ChallengeRecord | null {
    return this.commit(({ sql, now }) => consumeChallengeByHash(sql, purpose, subject, secretHash, now));
  }
}

/** The development message sink (`stub.devMessages()`): what would have been sent, for a developer. */
export class DevMessages extends TenantRpc {
  record(message: Omit<DevMessage, "created_at">): void {
    this.commit(({ sql, now }) => recordDevMessage(sql, message, now));
  }

  list(recipient: string | null, limit = 50): DevMessage[] {
    return this.read((sql) => listDevMessages(sql, recipient, Math.min(Math.max(limit, 1), DEV_MESSAGES_KEPT)));
  }
}
