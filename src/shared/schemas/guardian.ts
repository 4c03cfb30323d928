import { z } from "zod";

/** Factors a tenant can switch (SPEC §4.2 guardian routes, §2.5), in the order GET /guardian/factors lists them. */
export const GUARDIAN_FACTORS: readonly GuardianFactor[] = ["sms", "otp", "webauthn-roaming", "webauthn-platform", "recovery-code"];

export const isGuardianFactor = (name: string): name is GuardianFactor => (GUARDIAN_FACTORS as readonly string[]).includes(name);

/** Factors that an enrollment ticket can enroll (SPEC §4.2: tickets need OTP or SMS). */
export const TICKET_FACTORS: readonly GuardianFactor[] = ["otp", "sms"];

/**
 * A tenant's MFA settings before any write: every factor off except recovery codes (so whoever enrolls a
 * factor also gets a way back in), no policy, the deployment's own SMS sender.
 */
export const DEFAULT_GUARDIAN: GuardianSettings = {
  factors: { sms: false, otp: false, "webauthn-roaming": false, "webauthn-platform": false, "recovery-code": true },
  policies: [],
  sms_provider: "auth0",
};

/** PUT /guardian/factors/{name}. */
export const factorBody = z.strictObject({ enabled: z.boolean() });

/** PUT /guardian/policies: `["all-applications"]` enforces MFA, `[]` disables it. */
export const policiesBody = z
  .array(z.string().max(64))
  .max(1)
  .refine((list) => list.every((p) => p === "all-applications"), 'Supported policies: [] and ["all-applications"]');

/** PUT /guardian/factors/sms/selected-provider. */
export const selectedProviderBody = z.strictObject({
  provider: z.enum(["auth0", "twilio"], { message: 'provider must be "auth0" (the deployment\'s sender) or "twilio"' }),
});

const e164 = z.string().regex(/^\+[1-9]\d{7,14}$/, "from must be a phone number in E.164 format");

/** PUT /guardian/factors/sms/providers/twilio: given fields replace stored ones; auth_token is sealed at rest. */
export const twilioBody = z.strictObject({
  sid: z.string().min(1).max(64).regex(/^[A-Za-z0-9]+$/, "sid must be letters and digits").nullable().optional(),
  auth_token: z.string().min(1).max(256).nullable().optional(),
  from: e164.nullable().optional(),
  messaging_service_sid: z.string().min(1).max(64).regex(/^[A-Za-z0-9]+$/).nullable().optional(),
});

/** POST /guardian/enrollments/ticket (the reference platform's body). */
export const ticketBody = z.strictObject({
  user_id: z.string().min(1).max(255),
  email: z.email().max(320).optional(),
  send_mail: z.boolean().optional(),
  email_locale: z.string().max(16).optional(),
  /** The reference platform's enrollment factors; tickets here enroll `otp` or `phone` (SMS). */
  factor: z.enum(["otp", "phone", "push-notification", "email", "webauthn-roaming", "webauthn-platform"]).optional(),
  allow_multiple_enrollments: z.boolean().optional(),
});

/** Guardian factor names of SPEC §2.5 that a tenant switches on or off (plus recovery codes). */
export type GuardianFactor = "otp" | "sms" | "webauthn-roaming" | "webauthn-platform" | "recovery-code";

/** SMS providers a tenant may select: the deployment's own sender (`auth0`) or a Twilio account. */
export type SmsProviderName = "auth0" | "twilio";

/** A tenant's MFA settings (GET/PUT /api/v2/guardian/*), read by the login flow from the configuration snapshot. */
export interface GuardianSettings {
  factors: Record<GuardianFactor, boolean>;
  /** `["all-applications"]` enforces MFA at every login; `[]` leaves it off. */
  policies: string[];
  sms_provider: SmsProviderName;
}

/** The Twilio credentials of a tenant (`auth_token` sealed under `guardian_sms_provider:twilio`). */
export interface TwilioSettings {
  sid: string | null;
  from: string | null;
  messaging_service_sid: string | null;
  auth_token_enc: string | null;
}

/** The fields of an authentication method that decide whether a challenge can use it. */
interface MethodFacts {
  type: string;
  confirmed: boolean;
}

/**
 * The user's confirmed methods that a second-factor challenge can use under the tenant's enabled factors: a
 * TOTP app (`otp`), a phone (`sms`), security keys and platform authenticators (each when its factor is on)
 * and passkeys (always: a passkey has no guardian factor of its own, SPEC §2.5).
 */
export function challengeableMethods<M extends MethodFacts>(factors: GuardianSettings["factors"], methods: readonly M[]): M[] {
  return methods.filter(
    (m) =>
      m.confirmed &&
      ((m.type === "totp" && factors.otp) ||
        (m.type === "phone" && factors.sms) ||
        m.type === "passkey" ||
        (m.type === "webauthn-roaming" && factors["webauthn-roaming"]) ||
        (m.type === "webauthn-platform" && factors["webauthn-platform"])),
  );
}

/**
 * Issue 25 finding 1 (the reference platform's rule): during a login, a user who has a factor the tenant can
 * challenge must answer it first; only then may the login enroll another one. A login that has not passed
 * its challenge can enroll only when the user has nothing to be challenged with. Enrollment tickets and the
 * management API are not logins and are not limited by this.
 */
export const loginMayEnroll = (factors: GuardianSettings["factors"], methods: readonly MethodFacts[], satisfied: boolean) =>
  satisfied || challengeableMethods(factors, methods).length === 0;
