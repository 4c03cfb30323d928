import type { en } from "../../../shared/i18n/languages/en";
import { challengeableMethods, loginMayEnroll, TICKET_FACTORS } from "../../../shared/schemas/guardian";
import type { MfaActionStep, MfaTransaction, TenantConfig } from "../../../shared/types";
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
  // An action's enrollment reaches its `enroll` phase only after the user passed a challenge (or had nothing to answer).
  const passed = tx.pending.satisfied === true || tx.pending.action?.phase === "enroll";
  if (tx.kind === "login" && !loginMayEnroll(on, methods, passed)) return [];
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

/** The guardian factor that enrolls each of the reference's factor types (recovery codes are not enrolled). */
const ENROLLS: Record<string, GuardianFactor> = { otp: "otp", phone: "sms", "webauthn-platform": "webauthn-platform", "webauthn-roaming": "webauthn-roaming" };

/** The reference's factor type a WebAuthn method answers for (a passkey is a platform authenticator). */
const webauthnType = (type: string) => (type === "webauthn-roaming" ? "webauthn-roaming" : "webauthn-platform");

const NONE: UsableMethods = { totp: null, phone: null, webauthn: [], recovery: false };

/**
 * What a post-login action's MFA step (issue 32) leaves of the user's methods and enrollable factors:
 * `challenge` only the named factors and no enrollment; `enroll` any method for the first challenge, then
 * only enrollments of the named factors; `any` the named factors when the provider names some.
 */
export function narrowForAction(usable: UsableMethods, enrollable: GuardianFactor[], step: MfaActionStep | undefined): { usable: UsableMethods; enrollable: GuardianFactor[] } {
  if (!step) return { usable, enrollable };
  const named = new Set(step.factors ?? []);
  const enrolls = (f: GuardianFactor) => step.factors === null || [...named].some((n) => ENROLLS[n] === f);
  if (step.mode === "enroll") return step.phase === "enroll" ? { usable: NONE, enrollable: enrollable.filter(enrolls) } : { usable, enrollable: enrollable.filter(enrolls) };
  if (step.factors === null) return { usable, enrollable };
  const narrowed: UsableMethods = {
    totp: named.has("otp") ? usable.totp : null,
    phone: named.has("phone") ? usable.phone : null,
    webauthn: usable.webauthn.filter((m) => named.has(webauthnType(m.type))),
    recovery: named.has("recovery-code") && usable.recovery,
  };
  return { usable: narrowed, enrollable: step.mode === "challenge" ? [] : enrollable.filter(enrolls) };
}

/** Whether the tenant lets a user enroll one of these factor types now (enabled, and not one of a kind already held). */
export function canEnrollOneOf(config: TenantConfig, methods: AuthenticationMethodRecord[], factors: readonly string[]): boolean {
  const on = config.guardian.factors;
  const has = (type: string) => methods.some((m) => m.type === type && m.confirmed);
  return factors.some((f) => {
    const g = ENROLLS[f];
    if (!g || !on[g]) return false;
    return g === "otp" ? !has("totp") : g === "sms" ? !has("phone") : true;
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
