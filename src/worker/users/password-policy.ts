import { utf8 } from "../../shared/crypto/encoding";
import { MAX_PASSWORD_BYTES } from "../../shared/crypto/passwords";
import type { ConnectionRecord } from "../../shared/schemas/connections";

/** Password length when the connection sets no policy. @default 8 */
export const MIN_PASSWORD_LENGTH = 8;

/**
 * The reference platform's `passwordPolicy` levels of a database connection: a minimum length and how many of
 * the four character classes (lower, upper, digit, other) a password must mix.
 */
const LEVELS: Record<string, { min: number; classes: number; noTriples?: boolean }> = {
  none: { min: 1, classes: 0 },
  low: { min: 6, classes: 0 },
  fair: { min: 8, classes: 3 },
  good: { min: 8, classes: 3 },
  excellent: { min: 10, classes: 3, noTriples: true },
};

/** A password the connection refuses, with what a person is told. */
export interface PasswordProblem {
  code: "PASSWORD_TOO_SHORT" | "PASSWORD_TOO_LONG" | "PASSWORD_TOO_WEAK";
  message: string;
  /** The login pages' text for it (`common/errors/<text>`) and its placeholders (issue 29 point 3). */
  text?: string;
  vars?: Record<string, number>;
}

const CLASSES = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^a-zA-Z0-9]/];

/**
 * Checks a password against its database connection's policy (`options.passwordPolicy`, and
 * `options.password_complexity_options.min_length` to raise or lower the length), the same rule on the
 * sign-up page, /dbconnections/signup and the management API. Without a policy: at least
 * {@link MIN_PASSWORD_LENGTH} characters. Always at most 72 bytes, the part bcrypt reads.
 */
export function passwordProblem(password: string, connection?: Pick<ConnectionRecord, "options">): PasswordProblem | null {
  const options = connection?.options ?? {};
  const policy = typeof options.passwordPolicy === "string" ? LEVELS[options.passwordPolicy] : undefined;
  const complexity = options.password_complexity_options as { min_length?: unknown } | undefined;
  const configured = typeof complexity?.min_length === "number" ? complexity.min_length : undefined;
  const min = Math.max(1, Math.min(128, configured ?? policy?.min ?? MIN_PASSWORD_LENGTH));
  if ([...password].length < min) return { code: "PASSWORD_TOO_SHORT", message: `Password must be at least ${min} characters long.`, vars: { minLength: min } };
  if (utf8(password).byteLength > MAX_PASSWORD_BYTES) {
    return { code: "PASSWORD_TOO_LONG", message: `Password must be at most ${MAX_PASSWORD_BYTES} bytes long.`, vars: { maxBytes: MAX_PASSWORD_BYTES } };
  }
  if (policy && CLASSES.filter((c) => c.test(password)).length < policy.classes) {
    return {
      code: "PASSWORD_TOO_WEAK",
      message: `Password must contain at least ${policy.classes} of: lower case, upper case, digits, special characters.`,
      vars: { count: policy.classes },
    };
  }
  if (policy?.noTriples && /(.)\1\1/u.test(password)) {
    return { code: "PASSWORD_TOO_WEAK", message: "Password must not contain more than 2 identical characters in a row.", text: "password-identical-chars" };
  }
  return null;
}

/** The connection's password rule (its minimum length and character classes), for the hint under a new-password field. */
export function passwordPolicyHint(connection?: Pick<ConnectionRecord, "options">): { minLength: number; classes: number } {
  const options = connection?.options ?? {};
  const policy = typeof options.passwordPolicy === "string" ? LEVELS[options.passwordPolicy] : undefined;
  const complexity = options.password_complexity_options as { min_length?: unknown } | undefined;
  const configured = typeof complexity?.min_length === "number" ? complexity.min_length : undefined;
  const min = Math.max(1, Math.min(128, configured ?? policy?.min ?? MIN_PASSWORD_LENGTH));
  return { minLength: min, classes: policy?.classes ?? 0 };
}
