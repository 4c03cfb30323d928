import type { en } from "../../../shared/i18n/languages/en";
import { challengeableMethods, loginMayEnroll, TICKET_FACTORS } from "../../../shared/schemas/guardian";
import type { MfaTransaction, TenantConfig } from "../../../shared/types";
import type { AuthenticationMethodRecord } from "../../../shared/schemas/authentication-methods";
import type { GuardianFactor } from "../../../shared/schemas/guardian";

/**
 * Which factors a login must pass and may use (SPEC §2.5, §4.2 guardian routes): the tenant's policy, its
 * enabled factors and the user's confirmed methods. Pure functions of their inputs.
 */

/** `["all-applications"]` enforces MFA at every login (SPEC §4.2). */
export const isMfaRequired = (config: TenantConfig) => config.guardian.policies.includes("all-applications");

/** Factors a login can enroll, in the order the choice screen lists them. */
const LOGIN_FACTORS: readonly GuardianFactor[] = ["otp", "sms", "webauthn-platform", "webauthn-roaming"];

/** The user's methods a second-factor challenge may use. */
export interface UsableMethods {
  totp: AuthenticationMethodRecord | null;
  phone: AuthenticationMethodRecord | null;
  /** Security keys, platform authenticators (each when its factor is on) and passkeys (always). */
  webauthn: AuthenticationMethodRecord[];
  /** Recovery codes are on and the user has unused ones. */
  recovery: boolean;
}

export function usableMethods(config: TenantConfig, methods: AuthenticationMethodRecord[], unusedRecoveryCodes: number): UsableMethods {
  const on = config.guardian.factors;
  const usable = challengeableMethods(on, methods);
  return {
    totp: usable.find((m) => m.type === "totp") ?? null,
    phone: usable.find((m) => m.type === "phone") ?? null,
    webauthn: usable.filter((m) => m.type === "passkey" || m.type === "webauthn-roaming" || m.type === "webauthn-platform"),
    recovery: on["recovery-code"] && unusedRecoveryCodes > 0,
  };
}

export const hasAnyMethod = (u: UsableMethods) => Boolean(u.totp || u.phone || u.webauthn.length);

/**
 * Factors this transaction can enroll: a login any enabled one the user lacks (one TOTP and one phone per
 * user; security keys and platform authenticators may be added again), but only once it passed its challenge
 * when the user has a method to be challenged with (issue 25 finding 1: `loginMayEnroll`); a ticket OTP or
 * SMS only (SPEC §4.2), narrowed to the ticket's `factor` when it names one, regardless of policy.
 */
export function enrollableFactors(config: TenantConfig, tx: MfaTransaction, methods: AuthenticationMethodRecord[], ticketFactor?: string): GuardianFactor[] {
  const on = config.guardian.factors;
  if (tx.kind === "login" && !loginMayEnroll(on, methods, tx.pending.satisfied === true)) return [];
  const has = (type: string) => methods.some((m) => m.type === type);
  const candidates = tx.kind === "ticket" ? TICKET_FACTORS : LOGIN_FACTORS;
  return candidates.filter((f) => {
    if (!on[f]) return false;
    if (tx.kind === "ticket" && ticketFactor && ticketFactor !== f && !(ticketFactor === "phone" && f === "sms")) return false;
    if (f === "otp") return !has("totp");
    if (f === "sms") return !has("phone");
    return true;
  });
}

/** The enrollment screen of a factor. */
export const ENROLL_PATH: Record<GuardianFactor, string> = {
  otp: "/u2/mfa/totp-enrollment",
  sms: "/u2/mfa/phone-enrollment",
  "webauthn-roaming": "/u2/mfa/webauthn-enrollment?factor=webauthn-roaming&",
  "webauthn-platform": "/u2/mfa/webauthn-enrollment?factor=webauthn-platform&",
  "recovery-code": "/u2/mfa/recovery-code",
};

/** A path joined with the MFA query (`?state=...`; paths ending in `&` already have a query). */
export const withQuery = (path: string, query: string) => (path.endsWith("&") ? `${path}${query.slice(1)}` : `${path}${query}`);

/** What a factor is called on the screens: its `mfa/mfa-login-options` text ids (name, description). */
export const FACTOR_LABELS: Record<GuardianFactor, { label: FactorTextId; description: FactorTextId }> = {
  otp: { label: "authenticatorNamesOTP", description: "authenticatorDescriptionOTP" },
  sms: { label: "authenticatorNamesSMS", description: "authenticatorDescriptionSMS" },
  "webauthn-roaming": { label: "authenticatorNamesWebauthnRoaming", description: "authenticatorDescriptionWebauthnRoaming" },
  "webauthn-platform": { label: "authenticatorNamesWebauthnPlatform", description: "authenticatorDescriptionWebauthnPlatform" },
  "recovery-code": { label: "authenticatorNamesRecoveryCode", description: "authenticatorDescriptionRecoveryCode" },
};
type FactorTextId = keyof (typeof en)["mfa"]["mfa-login-options"];

/** amr values (RFC 8176) after a second factor: the first factor's, the factor's own, and `mfa`. */
export function amrAfter(first: string[] | undefined, factor: string): string[] {
  return [...new Set([...(first ?? []), factor, "mfa"])];
}
