import { randomToken } from "../../../shared/crypto/random";

/**
 * RFC 8628 §6.1: user codes from an alphabet without vowels (no words) nor look-alike characters, 8
 * characters shown as XXXX-XXXX (20^8 ≈ 2^34.6 codes), typed case-insensitively with or without the dash.
 */
export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const USER_CODE_LENGTH = 8;

/** How long a device request waits for the user (RFC 8628 §3.2 `expires_in`). */
export const DEVICE_CODE_TTL_S = 900;
/** The minimum seconds between polls (RFC 8628 §3.2 `interval`). */
export const DEVICE_POLL_INTERVAL_S = 5;

/** A random user code, unbiased (rejection sampling over bytes). */
export function newUserCode(): string {
  let code = "";
  while (code.length < USER_CODE_LENGTH) {
    for (const b of crypto.getRandomValues(new Uint8Array(USER_CODE_LENGTH))) {
      if (b < 240 && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[b % USER_CODE_ALPHABET.length];
    }
  }
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** What the user typed, canonical: upper case, separators and spaces dropped, dash re-inserted; null if malformed. */
export function normalizeUserCode(input: string): string | null {
  const letters = input.toUpperCase().replace(/[\s-]/g, "");
  if (letters.length !== USER_CODE_LENGTH || [...letters].some((ch) => !USER_CODE_ALPHABET.includes(ch))) return null;
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

/** A device code: 256 random bits; only its hash is stored. */
export const newDeviceCode = () => randomToken(32);

/** The universal login page where the user enters the code (RFC 8628 §3.2 `verification_uri`). */
export const verificationUri = (issuer: string) => `${issuer.replace(/\/?$/, "/")}activate`;
