import { now } from "../../../shared/clock";
import { randomId } from "../../../shared/crypto/random";
import type { Json } from "../../../shared/types";
import type { AppContext } from "../../context";
import { tenantObject } from "../../tenant/stubs";
import { hashSecret } from "../session";

/**
 * Six-digit codes sent by SMS or email (SPEC §8 "MFA codes: 6 digits"): MFA phone challenges, phone
 * enrollment and passwordless login. The object keeps a hash, counts attempts, compares in constant time and
 * consumes with one conditional update, in one commit, so a code logs in once.
 */

/** A code is valid this long. @default 5 minutes */
export const CODE_TTL_MS = 5 * 60 * 1000;
/** Wrong guesses a code survives before it is dead. @default 3 */
export const CODE_MAX_ATTEMPTS = 3;

/** A uniform 6-digit code (rejection sampling over 32-bit values). */
export function newNumericCode(): string {
  const limit = 4_294_000_000; // largest multiple of 1e6 below 2^32
  for (;;) {
    const [value = 0] = crypto.getRandomValues(new Uint32Array(1));
    if (value < limit) return String(value % 1_000_000).padStart(6, "0");
  }
}

/** The stored hash of a code: bound to its subject, so a hash copied to another subject does not match. */
export const codeHash = (subject: string, code: string) => hashSecret(`otp:${subject}:${code}`);

/** Stores a new code for a purpose and subject (only its hash) and answers it for sending. */
export async function issueCode(c: AppContext, input: { purpose: string; subject: string; clientId: string | null; data?: Record<string, Json> }): Promise<{ id: string; code: string }> {
  const code = newNumericCode();
  const id = randomId("otp_");
  await tenantObject(c.env, c.var.tenant.id)
    .createChallenge({ id, purpose: input.purpose, subject: input.subject, client_id: input.clientId, secret_hash: await codeHash(input.subject, code), data: input.data ?? {}, expires_at: now() + CODE_TTL_MS });
  return { id, code };
}

/**
 * Checks a typed code against the newest live code of a purpose and subject: the attempt is counted first
 * (a code dies after CODE_MAX_ATTEMPTS wrong guesses), compared in constant time, then consumed once, all in
 * one commit of the tenant object (`redeemChallenge`). Answers the code's stored data when it was
 * accepted, else null.
 */
export async function redeemCode(c: AppContext, purpose: string, subject: string, clientId: string | null, typed: string): Promise<Record<string, Json> | null> {
  if (!/^\d{6}$/.test(typed)) return null;
  return tenantObject(c.env, c.var.tenant.id).redeemChallenge(purpose, subject, clientId, CODE_MAX_ATTEMPTS, await codeHash(subject, typed));
}

/** A phone number with all but its last four digits masked: `+•••••••0100`. */
export const maskPhone = (phone: string) => `${phone.slice(0, -4).replace(/\d/g, "•")}${phone.slice(-4)}`;
