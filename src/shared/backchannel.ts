/**
 * OpenID Connect Back-Channel Logout 1.0 (the OP side): which clients are notified for which session
 * termination, and the logout token they receive. Shared by the management schemas (client settings) and
 * the tenant object's relay, which signs and POSTs the tokens (objects/tenant/backchannel.ts).
 */
import { assertEgress, type EgressPolicy } from "./egress-policy";
import type { Json } from "./types";
import type { ClientRecord, LogoutInitiator } from "./schemas/clients";

/** The event a logout token carries (OIDC Back-Channel Logout 1.0 §2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";

/** Explicit typing of logout tokens (OIDC Back-Channel Logout 1.0 §2.4, RFC 8725 §3.11). */
export const LOGOUT_TOKEN_TYP = "logout+jwt";

/** A logout token is short-lived: it is signed at each delivery attempt, never stored. */
export const LOGOUT_TOKEN_TTL_S = 120;

/** SPEC §6.2 timeouts apply to every outbound call of the relay: 10 seconds per logout request. */
export const BACKCHANNEL_TIMEOUT_MS = 10_000;

// The initiators are part of the client schema (schemas/clients.ts), which this module reads.
export { LOGOUT_INITIATORS, type LogoutInitiator } from "./schemas/clients";

/**
 * Initiators a client with a back-channel URL but no `backchannel_logout_initiators` is notified for: every
 * deliberate end of a session (issue 10: revocation and blocking notify registered clients), but not
 * natural expiry, which a client must opt into.
 */
const DEFAULT_INITIATORS: readonly LogoutInitiator[] = ["rp-logout", "idp-logout", "session-revoked", "account-deleted", "account-deactivated", "password-changed"];

interface LogoutSettings {
  backchannel_logout_urls?: string[];
  backchannel_logout_initiators?: { mode?: "custom" | "all"; selected_initiators?: string[] };
}

/** The client's back-channel settings: `oidc_logout`, or the older `oidc_backchannel_logout` spelling. */
function settingsOf(client: Pick<ClientRecord, "extra">): LogoutSettings | null {
  const current = client.extra.oidc_logout as LogoutSettings | null | undefined;
  if (current?.backchannel_logout_urls?.length) return current;
  const legacy = client.extra.oidc_backchannel_logout as LogoutSettings | null | undefined;
  return legacy?.backchannel_logout_urls?.length ? legacy : null;
}

/** The registered back-channel logout URI (the reference platform allows one), or null. */
export function backchannelLogoutUrl(client: Pick<ClientRecord, "extra">): string | null {
  return settingsOf(client)?.backchannel_logout_urls?.[0] ?? null;
}

/**
 * Whether a client is notified when a session ends for this reason: it registered a URI, and its
 * initiators include the reason (`mode: "all"` includes everything; `rp-logout` is always included, as on
 * the reference platform).
 */
export function notifies(client: Pick<ClientRecord, "extra">, initiator: LogoutInitiator): boolean {
  const settings = settingsOf(client);
  if (!settings) return false;
  const chosen = settings.backchannel_logout_initiators;
  if (!chosen) return DEFAULT_INITIATORS.includes(initiator);
  if (chosen.mode === "all") return true;
  return initiator === "rp-logout" || (chosen.selected_initiators ?? []).includes(initiator);
}

/** What one notification names (OIDC Back-Channel Logout 1.0 §2.4: `sid` and `sub` both, as the reference platform sends). */
export interface LogoutSubject {
  issuer: string;
  client_id: string;
  user_id: string;
  session_id: string | null;
}

/**
 * The claims of a logout token: iss, aud, iat, exp, a fresh jti, sub, sid and the back-channel event; never
 * a nonce (§2.4: its presence is what distinguishes an ID token, so an RP refuses a logout token carrying one).
 */
export function logoutTokenClaims(subject: LogoutSubject, nowS: number, jti: string): Record<string, Json> {
  return {
    iss: subject.issuer,
    aud: subject.client_id,
    iat: nowS,
    exp: nowS + LOGOUT_TOKEN_TTL_S,
    jti,
    sub: subject.user_id,
    ...(subject.session_id ? { sid: subject.session_id } : {}),
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  };
}

/**
 * POSTs a logout token (§2.5): `application/x-www-form-urlencoded` `logout_token=...`, no redirects
 * followed, bounded by BACKCHANNEL_TIMEOUT_MS. Any 2xx is success (§2.8 asks for 200; some frameworks
 * answer 204); anything else throws, so the relay retries and eventually dead-letters. A URL the egress
 * policy refuses (issue 25 point 8) throws EgressRefused without a request.
 */
export async function postLogoutToken(url: string, token: string, egress: EgressPolicy): Promise<void> {
  assertEgress(url, egress);
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": "Gatehouse-Backchannel-Logout/1" },
    body: new URLSearchParams({ logout_token: token }).toString(),
    redirect: "manual",
    signal: AbortSignal.timeout(BACKCHANNEL_TIMEOUT_MS),
  });
  void response.body?.cancel();
  if (response.status < 200 || response.status > 299) throw new Error(`HTTP ${response.status}`);
}
