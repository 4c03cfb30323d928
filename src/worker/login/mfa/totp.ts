import { Secret, TOTP } from "otpauth";
import { timingSafeEqualText } from "../../../shared/crypto/compare";

/**
 * TOTP (RFC 6238) with the parameters every authenticator app supports: SHA-1, 6 digits, 30-second steps.
 * Verification accepts the current step and one on each side (SPEC §8: "device within about 30 seconds"),
 * compares every candidate in constant time, and answers the matching step so the caller can make the code
 * single-use (RFC 6238 §5.2).
 */

export const TOTP_PERIOD_S = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted on each side of the current one. @default 1 */
export const TOTP_WINDOW = 1;

/** A new 160-bit secret (RFC 4226 §4 recommends 160 bits), base32. */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

/** The `otpauth://` URI an authenticator app scans (Key Uri Format). */
export function totpUri(secret: string, issuer: string, account: string): string {
  return new TOTP({ issuer, label: account, secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: TOTP_DIGITS, period: TOTP_PERIOD_S }).toString();
}

/** The code of a step (tests and the bench compute codes with it). */
export function totpCode(secret: string, timestampMs: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: TOTP_DIGITS, period: TOTP_PERIOD_S }).generate({ timestamp: timestampMs });
}

/** Whether a submitted value has the shape of a code (spaces a person typed are dropped by the caller). */
export const isCodeShaped = (code: string) => /^\d{6}$/.test(code);

/**
 * The time step whose code equals `code`, within the window around `nowMs`, or null. Every candidate is
 * compared (no early exit) and in constant time, so timing tells nothing about which step was close.
 */
export async function matchTotp(secret: string, code: string, nowMs: number): Promise<number | null> {
  if (!isCodeShaped(code)) return null;
  const current = Math.floor(nowMs / 1000 / TOTP_PERIOD_S);
  let matched: number | null = null;
  for (let offset = -TOTP_WINDOW; offset <= TOTP_WINDOW; offset++) {
    const step = current + offset;
    const expected = totpCode(secret, step * TOTP_PERIOD_S * 1000);
    if ((await timingSafeEqualText(expected, code)) && matched === null) matched = step;
  }
  return matched;
}

/** The secret grouped by four for reading aloud or typing (`ABCD EFGH ...`). */
export const groupSecret = (secret: string) => secret.replace(/(.{4})/g, "$1 ").trim();
