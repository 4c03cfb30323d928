import type { NewPushedRequest, PushedRequestOutcome } from "../../../shared/types";
import { json, type Sql } from "../../sql";
import { TenantRpc } from "../core/rpc";

/**
 * Pushed authorization requests (RFC 9126): the parameters a client pushed, bound to it, consumed once by
 * /authorize with one conditional update. A request_uri presented by another client is refused and stays
 * usable by its own.
 */

export function pushRequest(sql: Sql, r: NewPushedRequest, now: number): void {
  sql.run`DELETE FROM pushed_authorization_requests WHERE expires_at <= ${now}`;
  sql.run`INSERT INTO pushed_authorization_requests (request_uri_hash, client_id, params, expires_at, created_at)
    VALUES (${r.request_uri_hash}, ${r.client_id}, ${JSON.stringify(r.params)}, ${r.expires_at}, ${now})`;
}

export function consumePushedRequest(sql: Sql, requestUriHash: string, clientId: string, now: number): PushedRequestOutcome {
  const row = sql.first<{ params: string }>`
    UPDATE pushed_authorization_requests SET consumed_at = ${now}
    WHERE request_uri_hash = ${requestUriHash} AND client_id = ${clientId} AND consumed_at IS NULL AND expires_at > ${now}
    RETURNING params`;
  if (row) return { ok: true, params: json<Record<string, string>>(row.params, {}) };
  const existing = sql.first<{ client_id: string; consumed_at: number | null; expires_at: number }>`
    SELECT client_id, consumed_at, expires_at FROM pushed_authorization_requests WHERE request_uri_hash = ${requestUriHash}`;
  if (!existing) return { ok: false, reason: "unknown" };
  if (existing.client_id !== clientId) return { ok: false, reason: "client_mismatch" };
  if (existing.consumed_at !== null) return { ok: false, reason: "consumed" };
  return { ok: false, reason: "expired" };
}

/** Pushed authorization requests (`stub.pushedRequests()`). */
export class PushedRequests extends TenantRpc {
  push(request: NewPushedRequest): void {
    this.commit(({ sql, now }) => pushRequest(sql, request, now));
  }

  consume(requestUriHash: string, clientId: string): PushedRequestOutcome {
    return this.commit(({ sql, now }) => consumePushedRequest(sql, requestUriHash, clientId, now));
  }
}
