import type { CodeGrant, DeviceLookup, DevicePoll, NewDeviceCode } from "../../../shared/types";
import { json, type Sql } from "../../sql";
import { TenantRpc } from "../core/rpc";

/**
 * The device authorization grant (RFC 8628): requests keyed by the hashes of their device and user codes,
 * approved by one commit that also consumes the login's authorization code, and redeemed by one
 * conditional update, so a device code yields tokens exactly once.
 */

/** Expired rows are kept this long (a late poll still hears `expired_token`), then swept at the next insert. */
const EXPIRED_RETENTION_MS = 24 * 3600 * 1000;
/** RFC 8628 §3.5: `slow_down` adds 5 seconds to the interval for every later request. */
const SLOW_DOWN_STEP_S = 5;
/** RFC 8628 §5.1: failed user-code entries per IP, and entries of one code, per window. */
export const USER_CODE_ATTEMPTS = { perIp: 10, perCode: 10, windowMs: 15 * 60 * 1000 } as const;

/** Stores a device request; false when its user code collides with a live one (the caller draws another). */
export function createDeviceCode(sql: Sql, d: NewDeviceCode, now: number): boolean {
  sql.run`DELETE FROM device_codes WHERE expires_at <= ${now - EXPIRED_RETENTION_MS}`;
  sql.run`DELETE FROM device_code_attempts WHERE window_ends_at <= ${now}`;
  return (
    sql.run`INSERT OR IGNORE INTO device_codes (id, device_code_hash, user_code_hash, client_id, scope, audience, interval_s, expires_at, created_at)
      VALUES (${d.id}, ${d.device_code_hash}, ${d.user_code_hash}, ${d.client_id}, ${d.scope}, ${d.audience}, ${d.interval_s}, ${d.expires_at}, ${now})` > 0
  );
}

/** Counts one attempt under `key`; true when the key is over `limit` in its window. */
function overLimit(sql: Sql, key: string, limit: number, now: number): boolean {
  const row = sql.first<{ count: number }>`
    INSERT INTO device_code_attempts (key, count, window_ends_at) VALUES (${key}, 1, ${now + USER_CODE_ATTEMPTS.windowMs})
    ON CONFLICT (key) DO UPDATE SET
      count = CASE WHEN window_ends_at <= ${now} THEN 1 ELSE count + 1 END,
      window_ends_at = CASE WHEN window_ends_at <= ${now} THEN ${now + USER_CODE_ATTEMPTS.windowMs} ELSE window_ends_at END
    RETURNING count`;
  return (row?.count ?? 0) > limit;
}

const attemptsOf = (sql: Sql, key: string, now: number) =>
  sql.first<{ count: number }>`SELECT count FROM device_code_attempts WHERE key = ${key} AND window_ends_at > ${now}`?.count ?? 0;

/**
 * A user code entered at /activate (RFC 8628 §5.1): an IP over its failures, or a code entered too often,
 * is throttled before anything is looked up; an unknown code counts against the IP.
 */
export function lookUpUserCode(sql: Sql, userCodeHash: string, ip: string, now: number): DeviceLookup {
  if (attemptsOf(sql, `ip:${ip}`, now) >= USER_CODE_ATTEMPTS.perIp) return { ok: false, reason: "throttled" };
  if (overLimit(sql, `code:${userCodeHash}`, USER_CODE_ATTEMPTS.perCode, now)) return { ok: false, reason: "throttled" };
  const row = sql.first<{ id: string; client_id: string; scope: string; audience: string | null }>`
    SELECT id, client_id, scope, audience FROM device_codes
    WHERE user_code_hash = ${userCodeHash} AND status = 'pending' AND expires_at > ${now}`;
  if (row) return { ok: true, device: row };
  overLimit(sql, `ip:${ip}`, USER_CODE_ATTEMPTS.perIp, now);
  return { ok: false, reason: "unknown" };
}

/** The user refused on the confirmation screen; false when the request is no longer pending. */
export function denyDeviceCode(sql: Sql, id: string, now: number): boolean {
  return sql.run`UPDATE device_codes SET status = 'denied' WHERE id = ${id} AND status = 'pending' AND expires_at > ${now}` > 0;
}

/**
 * Approves a pending device request with the authorization code its login produced: the code must be
 * unconsumed, unexpired, the device's client's and issued to the device's own callback; it is consumed and
 * its grant (scope, audience, auth_time, amr, the actions' claims) moves to the device request, together.
 */
export function approveDeviceCode(sql: Sql, id: string, codeHash: string, redirectUri: string, now: number): boolean {
  const device = sql.first<{ client_id: string }>`
    SELECT client_id FROM device_codes WHERE id = ${id} AND status = 'pending' AND expires_at > ${now}`;
  if (!device) return false;
  const code = sql.first<{ user_id: string; session_id: string | null; grant: string }>`
    UPDATE authorization_codes SET consumed_at = ${now}
    WHERE code_hash = ${codeHash} AND consumed_at IS NULL AND expires_at > ${now}
      AND client_id = ${device.client_id} AND redirect_uri = ${redirectUri}
    RETURNING user_id, session_id, grant`;
  if (!code) return false;
  sql.run`UPDATE device_codes SET status = 'approved', user_id = ${code.user_id}, session_id = ${code.session_id}, grant = ${code.grant}
    WHERE id = ${id}`;
  return true;
}

/**
 * One poll (RFC 8628 §3.5): an approved request is consumed and answered once; a pending one polled before
 * its interval elapsed answers `slow_down` and lengthens the interval. A device code of another client is
 * `invalid` and changes nothing.
 */
export function pollDeviceCode(sql: Sql, deviceCodeHash: string, clientId: string, now: number): DevicePoll {
  const row = sql.first<{ id: string; client_id: string; status: string; interval_s: number; last_polled_at: number | null; expires_at: number }>`
    SELECT id, client_id, status, interval_s, last_polled_at, expires_at FROM device_codes WHERE device_code_hash = ${deviceCodeHash}`;
  if (!row || row.client_id !== clientId) return { status: "invalid" };
  if (row.status === "consumed") return { status: "invalid" };
  if (row.expires_at <= now) return { status: "expired" };
  if (row.status === "denied") return { status: "denied" };
  if (row.status === "approved") {
    const approved = sql.first<{ user_id: string; session_id: string | null; grant: string }>`
      UPDATE device_codes SET status = 'consumed', last_polled_at = ${now}
      WHERE id = ${row.id} AND status = 'approved' RETURNING user_id, session_id, grant`;
    if (!approved) return { status: "invalid" };
    const grant = json<CodeGrant>(approved.grant, { scope: "", auth_time: 0 });
    return { status: "approved", user_id: approved.user_id, session_id: approved.session_id, grant };
  }
  const tooSoon = row.last_polled_at !== null && now - row.last_polled_at < row.interval_s * 1000;
  const interval = tooSoon ? row.interval_s + SLOW_DOWN_STEP_S : row.interval_s;
  sql.run`UPDATE device_codes SET last_polled_at = ${now}, interval_s = ${interval} WHERE id = ${row.id}`;
  return { status: tooSoon ? "slow_down" : "pending", interval_s: interval };
}

/** Device authorization requests (`stub.deviceCodes()`). */
export class DeviceCodes extends TenantRpc {
  create(device: NewDeviceCode): boolean {
    return this.commit(({ sql, now }) => createDeviceCode(sql, device, now));
  }

  lookUp(userCodeHash: string, ip: string): DeviceLookup {
    return this.commit(({ sql, now }) => lookUpUserCode(sql, userCodeHash, ip, now));
  }

  deny(id: string): boolean {
    return this.commit(({ sql, now }) => denyDeviceCode(sql, id, now));
  }

  approve(id: string, codeHash: string, redirectUri: string): boolean {
    return this.commit(({ sql, now }) => approveDeviceCode(sql, id, codeHash, redirectUri, now));
  }

  poll(deviceCodeHash: string, clientId: string): DevicePoll {
    return this.commit(({ sql, now }) => pollDeviceCode(sql, deviceCodeHash, clientId, now));
  }
}
