import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../../../shared/crypto/encoding";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { randomId, randomToken } from "../../../shared/crypto/random";
import type { ClientRecord, RefreshLifetimes, TenantConfig } from "../../../shared/types";
import { hashSecret } from "../../login/session";

/**
 * Opaque refresh tokens that carry their own route (ARCHITECTURE.md §5): `v1.<tenant>.<user>.<id>.<secret>`
 * with the user id base64url-encoded, so the worker reaches the right UserObject without a lookup. Only
 * SHA-256 of the secret is stored, compared in constant time inside the object.
 */
export interface ParsedRefreshToken {
  tenantId: string;
  userId: string;
  id: string;
  secret: string;
}

const SHAPE = /^v1\.([a-z0-9_-]{1,63})\.([A-Za-z0-9_-]{1,400})\.(rt_[A-Za-z0-9]{22})\.([A-Za-z0-9_-]{43})$/;

export function formatRefreshToken(t: ParsedRefreshToken): string {
  return `v1.${t.tenantId}.${toBase64Url(utf8(t.userId))}.${t.id}.${t.secret}`;
}

/** The parts of a refresh token, or null for anything not of our shape. */
export function parseRefreshToken(token: string): ParsedRefreshToken | null {
  const match = SHAPE.exec(token);
  if (!match) return null;
  try {
    const userId = fromUtf8(fromBase64Url(match[2] as string));
    return { tenantId: match[1] as string, userId, id: match[3] as string, secret: match[4] as string };
  } catch {
    return null;
  }
}

export const newRefreshTokenId = () => randomId("rt_");
export const newRefreshSecret = () => randomToken(32);
export const refreshSecretHash = (secret: string) => hashSecret(secret);

const successorKeys = new Map<string, Promise<CryptoKey>>();

/**
 * The secret of a token's successor, derived (HMAC-SHA256 under a key derived from ENCRYPTION_KEY) from the
 * token's own secret. Deterministic so that the immediately previous token, replayed within the client's
 * leeway, can be answered with the same successor although only hashes are stored (SPEC §3.3).
 */
export async function successorSecret(encryptionKey: string | undefined, secret: string): Promise<string> {
  await fieldCipher(encryptionKey); // the same validation as every credential: never derive from a weak key
  if (!encryptionKey) throw new Error("unreachable: fieldCipher refuses a missing key");
  let key = successorKeys.get(encryptionKey);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", utf8(encryptionKey), "HKDF", false, ["deriveKey"])
      .then((material) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: utf8("gatehouse"), info: utf8("refresh-successor/v1") },
          material,
          { name: "HMAC", hash: "SHA-256", length: 256 },
          false,
          ["sign"],
        ),
      );
    successorKeys.set(encryptionKey, key);
  }
  const mac = await crypto.subtle.sign("HMAC", await key, utf8(`successor:${secret}`));
  return toBase64Url(new Uint8Array(mac));
}

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
