import { builtInEmail } from "../../../shared/i18n/email-texts";
import { emailLanguage } from "../../../shared/i18n/negotiate";
import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { randomToken } from "../../../shared/crypto/random";
import { problem, unwrap } from "../../../shared/errors";
import {
  factorBody,
  GUARDIAN_FACTORS,
  isGuardianFactor,
  policiesBody,
  selectedProviderBody,
  TICKET_FACTORS,
  ticketBody,
  twilioBody,
} from "../../../shared/schemas/guardian";
import type { AuthenticationMethodRecord } from "../../../shared/schemas/authentication-methods";
import type { TwilioSettings } from "../../../shared/schemas/guardian";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { hashSecret } from "../../login/session";
import { composeEmail } from "../../messaging/email-templates";
import { emailSender } from "../../messaging/senders";
import { tenantConfig } from "../../tenant/config-cache";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

/** The reference platform's Twilio shape, without the auth token (sealed at rest, never echoed). */
const presentTwilio = (t: TwilioSettings) => ({ sid: t.sid, from: t.from, messaging_service_sid: t.messaging_service_sid });

/** An authentication method as a guardian enrollment (the reference platform's `GetGuardianEnrollmentResponseContent`). */
export function presentEnrollment(m: AuthenticationMethodRecord) {
  return {
    id: m.id,
    status: m.confirmed ? "confirmed" : "pending",
    ...(m.name !== null ? { name: m.name } : {}),
    ...(m.phone_number !== null ? { phone_number: m.phone_number, identifier: m.phone_number } : {}),
    ...(m.credential_id !== null ? { identifier: m.credential_id } : {}),
    ...(m.enrolled_at !== null ? { enrolled_at: m.enrolled_at } : {}),
    ...(m.last_auth_at !== null ? { last_auth: m.last_auth_at } : {}),
  };
}

/**
 * The enrollment URL: on the host the tenant was reached by (its subdomain or custom domain); otherwise
 * the apex with `tenant_id` (SPEC §5.5 step 5 resolves it).
 */
function ticketUrl(c: AppContext, ticket: string): string {
  const tenant = c.var.tenant;
  const base = tenant.issuer.endsWith("/") ? tenant.issuer : `${tenant.issuer}/`;
  const url = new URL(`${base}u2/guardian/enroll`);
  url.searchParams.set("ticket", ticket);
  const ownHost = tenant.via === "subdomain" || tenant.via === "custom_domain" || tenant.id === c.var.settings.controlPlaneTenantId;
  if (!ownHost) url.searchParams.set("tenant_id", tenant.id);
  return url.toString();
}

const config = (c: AppContext) => tenantConfig(c.var.tenant.id, targetTenant(c), c.var.settings);

/** `sms` and `phone` paths are the same settings (the reference platform has both). */
const smsPaths = <S extends string>(suffix: S) => [`/guardian/factors/sms${suffix}` as const, `/guardian/factors/phone${suffix}` as const];

export const guardianRoutes = [
  defineRoute({
    method: "get",
    path: "/guardian/factors",
    scope: "read:guardian_factors",
    summary: "The MFA factors and whether each is enabled",
    status: 200,
    async handler(c) {
      const { factors } = await targetTenant(c).guardian().settings();
      return c.json(GUARDIAN_FACTORS.map((name) => ({ name, enabled: factors[name], trial_expired: false })));
    },
  }),
  defineRoute({
    method: "put",
    path: "/guardian/factors/{name}",
    scope: "update:guardian_factors",
    summary: "Enable or disable a factor: otp, sms, webauthn-roaming, webauthn-platform, recovery-code (other names 404)",
    body: factorBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { params, body }) {
      if (!isGuardianFactor(params.name)) throw problem("inexistent_guardian_factor", { name: params.name, factors: GUARDIAN_FACTORS.join(", ") });
      const settings = await targetTenant(c).guardian(auditContext(c)).setFactor(params.name, body.enabled);
      return c.json({ enabled: settings.factors[params.name] });
    },
  }),
  defineRoute({
    method: "get",
    path: "/guardian/policies",
    scope: "read:mfa_policies",
    summary: 'The MFA policy: ["all-applications"] (MFA at every login) or []',
    status: 200,
    async handler(c) {
      return c.json((await targetTenant(c).guardian().settings()).policies);
    },
  }),
  defineRoute({
    method: "put",
    path: "/guardian/policies",
    scope: "update:mfa_policies",
    summary: 'Set the MFA policy: ["all-applications"] enforces MFA, [] disables it',
    body: policiesBody,
    status: 200,
    invalidatesConfig: true,
    async handler(c, { body }) {
      return c.json((await targetTenant(c).guardian(auditContext(c)).setPolicies(body)).policies);
    },
  }),
  ...smsPaths("/selected-provider").flatMap((path) => [
    defineRoute({
      method: "get",
      path,
      scope: "read:guardian_factors",
      summary: "The SMS provider: auth0 (the deployment's sender; the development sink locally) or twilio",
      status: 200,
      async handler(c) {
        return c.json({ provider: (await targetTenant(c).guardian().settings()).sms_provider });
      },
    }),
    defineRoute({
      method: "put",
      path,
      scope: "update:guardian_factors",
      summary: "Select the SMS provider",
      body: selectedProviderBody,
      status: 200,
      invalidatesConfig: true,
      async handler(c, { body }) {
        return c.json({ provider: (await targetTenant(c).guardian(auditContext(c)).setSmsProvider(body.provider)).sms_provider });
      },
    }),
  ]),
  ...smsPaths("/providers/{provider}").flatMap((path) => [
    defineRoute({
      method: "get",
      path,
      scope: "read:guardian_factors",
      summary: "The Twilio settings {sid, from, messaging_service_sid}; the auth token is never returned",
      status: 200,
      async handler(c, { params }) {
        if (params.provider !== "twilio") throw problem("inexistent_sms_provider", { name: params.provider });
        return c.json(presentTwilio(await targetTenant(c).guardian().twilio()));
      },
    }),
    defineRoute({
      method: "put",
      path,
      scope: "update:guardian_factors",
      summary: "Set the Twilio settings {sid, auth_token, from, messaging_service_sid}; auth_token is encrypted at rest",
      body: twilioBody,
      status: 200,
      async handler(c, { params, body }) {
        if (params.provider !== "twilio") throw problem("inexistent_sms_provider", { name: params.provider });
        const { auth_token, ...rest } = body;
        const patch: Partial<TwilioSettings> = { ...rest };
        if (auth_token !== undefined) {
          patch.auth_token_enc = auth_token === null ? null : await (await fieldCipher(c.env.ENCRYPTION_KEY)).encrypt(auth_token, encryptionContext.smsProvider("twilio"));
        }
        return c.json(presentTwilio(await targetTenant(c).guardian(auditContext(c)).updateTwilio(patch)));
      },
    }),
  ]),
  defineRoute({
    method: "post",
    path: "/guardian/enrollments/ticket",
    scope: "create:guardian_enrollment_tickets",
    summary: "An enrollment ticket for a user {ticket_id, ticket_url}: single use, 5 days; needs otp or sms enabled",
    body: ticketBody,
    status: 200,
    async handler(c, { body }) {
      const { guardian } = await config(c);
      const factor = body.factor === "phone" ? "sms" : body.factor;
      if (factor !== undefined && (!(TICKET_FACTORS as readonly string[]).includes(factor) || !guardian.factors[factor as "otp" | "sms"])) {
        throw problem("ticket_factor_disabled", { factor: body.factor ?? "" });
      }
      if (!TICKET_FACTORS.some((f) => guardian.factors[f])) throw problem("ticket_factors_disabled");
      const sender = body.send_mail ? await emailSender(c) : null;
      if (body.send_mail && !sender) throw problem("email_provider_missing");
      const ticket = randomToken(32);
      const options = { ...(body.factor ? { factor: body.factor } : {}), ...(body.allow_multiple_enrollments ? { allow_multiple_enrollments: true } : {}) };
      unwrap(await targetTenant(c).guardian(auditContext(c)).createTicket({ ticket_hash: await hashSecret(ticket), user_id: body.user_id, options }));
      const url = ticketUrl(c, ticket);
      if (sender) {
        const user = await targetTenant(c).users().get(body.user_id);
        const to = body.email ?? user?.email;
        if (to) {
          // The tenant's enrollment_email template, when enabled (plain text: this sender takes text only); the
          // built-in text in the user's language (issue 29 point 4), else the tenant's default.
          const tenantConfig = await config(c);
          const language = emailLanguage({ user, enabledLocales: tenantConfig.settings.enabled_locales });
          const builtIn = builtInEmail(language, "enrollment_email", { url });
          const { message } = await composeEmail(c, "enrollment_email", { config: tenantConfig, user: { email: to }, url, language }, builtIn);
          await sender.send({ to, subject: message.subject, body: message.text });
        }
      }
      return c.json({ ticket_id: ticket, ticket_url: url });
    },
  }),
  defineRoute({
    method: "get",
    path: "/guardian/enrollments/{id}",
    scope: "read:guardian_enrollments",
    summary: "One enrollment (an authentication method by id)",
    status: 200,
    async handler(c, { params }) {
      const method = await targetTenant(c).authenticationMethods().byId(params.id);
      if (!method) throw problem("inexistent_enrollment");
      return c.json(presentEnrollment(method));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/guardian/enrollments/{id}",
    scope: "delete:guardian_enrollments",
    summary: "Delete an enrollment (the authentication method)",
    status: 204,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).authenticationMethods(auditContext(c)).deleteById(params.id));
      return c.body(null, 204);
    },
  }),
];
