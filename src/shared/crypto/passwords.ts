import bcrypt from "bcryptjs";
import { BCRYPT_MAX_COST, bcryptCost } from "./bcrypt-cost";

/**
 * Password hashing in one place: the cost, the hash and the comparison. Hashing runs in the worker
 * (CPU work), never in an object; objects store and return the hash only.
 */

/** bcrypt cost for stored passwords. @default 10 */
export const BCRYPT_COST = 10;

/** bcrypt only reads the first 72 bytes; a longer password would be silently truncated, so it is refused. */
export const MAX_PASSWORD_BYTES = 72;

/**
 * A bcrypt (cost 10) hash of a random string nobody knows: compared against when the user does not exist, so
 * that "no such user" costs the same time as "wrong password".
 */
const DUMMY_HASH = "$2b$10$hprHHzpcqRTDeKPt6op/ouHnZdcFWFhLfyfha1l8Cp.7/im5I04tu";

/** The hash to store for a new password. */
export const hashPassword = (password: string, cost = BCRYPT_COST): Promise<string> => bcrypt.hash(password, cost);

/**
 * Whether the password matches the stored hash. Without a hash (unknown user, passwordless user) it still
 * runs one full comparison against a dummy hash and answers false, so timing does not tell them apart.
 */
export async function passwordMatches(password: string, hash: string | null | undefined): Promise<boolean> {
  const verified = await bcrypt.compare(password, hash ?? DUMMY_HASH);
  return Boolean(hash) && verified;
}

/**
 * The password check of a login: `match`, `mismatch`, or `cost_exceeded` for a stored hash whose cost is
 * above {@link BCRYPT_MAX_COST}. Such a hash is never compared (fail closed: its cost is the attacker's CPU
 * budget); the dummy comparison runs instead, so the answer takes the time of an ordinary wrong password.
 */
export async function checkPassword(password: string, hash: string | null | undefined): Promise<"match" | "mismatch" | "cost_exceeded"> {
  if (hash && (bcryptCost(hash) ?? 0) > BCRYPT_MAX_COST) {
    await passwordMatches(password, null);
    return "cost_exceeded";
  }
  return (await passwordMatches(password, hash)) ? "match" : "mismatch";
}
