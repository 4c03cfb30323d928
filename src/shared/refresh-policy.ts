import type { RefreshLifetimes, TenantConfig } from "./types";
import type { ClientRecord } from "./schemas/clients";

/**
 * Refresh-token lifetimes (SPEC §2.8): used by the refresh grant in the worker and by the user object's
 * cleanup, which must apply the same policy before it deletes a token (a client switched to non-expiring
 * keeps its tokens alive).
 */

/** The client's refresh_token settings (SPEC §2.8), as stored in the client's `extra`. */
interface RefreshSettings {
  expiration_type?: "expiring" | "non-expiring";
  token_lifetime?: number;
  idle_token_lifetime?: number;
  infinite_token_lifetime?: boolean;
  infinite_idle_token_lifetime?: boolean;
  leeway?: number;
}

/** @default 30 seconds (SPEC §8). */
export const DEFAULT_REFRESH_LEEWAY_S = 30;
/** Tenant session lifetimes when unset (the reference platform's defaults), in hours. */
const DEFAULT_SESSION_LIFETIME_H = 168;
const DEFAULT_IDLE_SESSION_LIFETIME_H = 72;

const settingsOf = (client: ClientRecord) => (client.extra.refresh_token ?? {}) as RefreshSettings;

/**
 * Absolute and idle windows in milliseconds (null = none), each resolved independently (SPEC §2.8):
 * `expiration_type` non-expiring, then the infinite flag, then the client's seconds, then the tenant's
 * session lifetime in hours.
 */
export function refreshWindows(client: ClientRecord, config: TenantConfig): { absoluteMs: number | null; idleMs: number | null } {
  const s = settingsOf(client);
  const tenant = config.settings as { session_lifetime?: number; idle_session_lifetime?: number };
  const nonExpiring = s.expiration_type === "non-expiring";
  const pick = (infinite: boolean | undefined, seconds: number | undefined, tenantHours: number) => {
    if (nonExpiring || infinite) return null;
    if (seconds !== undefined) return seconds * 1000;
    return tenantHours * 3_600_000;
  };
  return {
    absoluteMs: pick(s.infinite_token_lifetime, s.token_lifetime, tenant.session_lifetime ?? DEFAULT_SESSION_LIFETIME_H),
    idleMs: pick(s.infinite_idle_token_lifetime, s.idle_token_lifetime, tenant.idle_session_lifetime ?? DEFAULT_IDLE_SESSION_LIFETIME_H),
  };
}

/** The policy a rotation applies to an existing token (drops inherited expiries when now infinite). */
export function rotationLifetimes(client: ClientRecord, config: TenantConfig): RefreshLifetimes {
  const { absoluteMs, idleMs } = refreshWindows(client, config);
  return { absolute_infinite: absoluteMs === null, idle_infinite: idleMs === null, idle_lifetime_ms: idleMs };
}

export const refreshLeewayMs = (client: ClientRecord) => (settingsOf(client).leeway ?? DEFAULT_REFRESH_LEEWAY_S) * 1000;
