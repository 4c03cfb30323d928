import type { RefreshDevice, RefreshLogin, RefreshTokenRecord } from "../schemas/refresh-tokens";
/** Refresh tokens (SPEC §2.8, §3.3): what crosses RPC between the worker and a user's object. */

/** The first token of a family, prepared by the worker (random id, SHA-256 of the secret). */
export interface NewRefreshToken {
  id: string;
  token_hash: string;
  client_id: string;
  user_id: string;
  session_id: string | null;
  scope: string;
  audience: string | null;
  login: RefreshLogin;
  device: RefreshDevice;
  /** Absolute lifetime in ms from issuance (the object's clock), or null for none. */
  lifetime_ms: number | null;
  /** Idle window in ms, or null for none. */
  idle_lifetime_ms: number | null;
}

/** One use of the refresh grant. The successor's id and hash are prepared by the worker. */
export interface RefreshRotation {
  id: string;
  token_hash: string;
  client_id: string;
  successor_id: string;
  successor_hash: string;
  leeway_ms: number;
  device: RefreshDevice;
  /**
   * The scopes asked for, when the request names some: any the token does not hold refuse the request
   * (`invalid_scope`) before anything is written, so a refused request never spends the token.
   */
  scope?: string[] | null;
  /** The thumbprint of the request's DPoP proof key, if any: a family bound to a key needs that key's proof. */
  dpop_jkt?: string | null;
  /** Answer as a rotation would (reuse detection included) but write no successor: a refused org switch. */
  check_only?: boolean;
  /**
   * The client's tokens were revoked at this time (POST /refresh-tokens/revoke with `client_id` alone): a
   * family started before it is revoked at its next use.
   */
  revoked_before?: number | null;
}

/** The client's refresh-token policy at the time of use (SPEC §2.8 precedence, resolved by the worker). */
export interface RefreshLifetimes {
  absolute_infinite: boolean;
  idle_infinite: boolean;
  idle_lifetime_ms: number | null;
}

export type RotateOutcome =
  | { ok: true; token: RefreshTokenRecord; replay: boolean }
  | { ok: false; reason: "unknown" | "client_mismatch" | "revoked" | "expired" | "reused" | "dpop_mismatch" }
  | { ok: false; reason: "invalid_scope"; wider: string[] };

/**
 * Which of a user's tokens a bulk revocation reaches (POST /api/v2/refresh-tokens/revoke): every family, or
 * those of one client, optionally of one audience as well.
 */
export interface RefreshRevocationFilter {
  client_id?: string;
  audience?: string;
}

// Declared with the resource's schema (issue 26 point 4); re-exported for callers.
export type { RefreshDevice, RefreshLogin, RefreshTokenRecord } from "../schemas/refresh-tokens";
