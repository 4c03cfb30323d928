import { hashSecret } from "../session";

/**
 * Recovery codes (issue 12 point 3): ten codes of ten characters from an alphabet without look-alikes
 * (no 0/O, 1/I/L), 50 bits each, shown once as `XXXXX-XXXXX`; only SHA-256 of each normalized code is kept.
 */

const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/** @default 10 */
export const RECOVERY_CODE_COUNT = 10;
const LENGTH = 10;

function code(): string {
  let out = "";
  while (out.length < LENGTH) {
    for (const b of crypto.getRandomValues(new Uint8Array(LENGTH))) {
      // Rejection sampling keeps every character equally likely (248 = 8 * 31).
      if (b < 248 && out.length < LENGTH) out += ALPHABET[b % ALPHABET.length];
    }
  }
  return `${out.slice(0, 5)}-${out.slice(5)}`;
}

export const newRecoveryCodes = (): string[] => Array.from({ length: RECOVERY_CODE_COUNT }, code);

/** A code as typed, normalized: upper case, separators and spaces dropped. */
export const normalizeRecoveryCode = (typed: string) => typed.toUpperCase().replace(/[^A-Z0-9]/g, "");

export const recoveryCodeHash = (typed: string) => hashSecret(`recovery:${normalizeRecoveryCode(typed)}`);
