import type { CodeGrant } from "./auth";

/** A device authorization request as the worker prepares it (RFC 8628 §3.2): hashes only. */
export interface NewDeviceCode {
  id: string;
  device_code_hash: string;
  user_code_hash: string;
  client_id: string;
  scope: string;
  audience: string | null;
  interval_s: number;
  /** Epoch milliseconds. */
  expires_at: number;
}

/** A device request still waiting for the user, as /activate shows it. */
export interface PendingDeviceCode {
  id: string;
  client_id: string;
  scope: string;
  audience: string | null;
}

/** What entering a user code at /activate found (RFC 8628 §5.1: attempts are throttled per IP and per code). */
export type DeviceLookup = { ok: true; device: PendingDeviceCode } | { ok: false; reason: "unknown" | "throttled" };

/** One poll of the token endpoint (RFC 8628 §3.5). */
export type DevicePoll =
  | { status: "approved"; user_id: string; session_id: string | null; grant: CodeGrant }
  | { status: "pending" | "slow_down"; interval_s: number }
  | { status: "denied" | "expired" | "invalid" };

/** Pushed authorization request parameters (RFC 9126 §2.1), stored as sent. */
export interface NewPushedRequest {
  request_uri_hash: string;
  client_id: string;
  params: Record<string, string>;
  /** Epoch milliseconds. */
  expires_at: number;
}

export type PushedRequestOutcome = { ok: true; params: Record<string, string> } | { ok: false; reason: "unknown" | "expired" | "consumed" | "client_mismatch" };
