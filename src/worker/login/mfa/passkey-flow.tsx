import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { LoginSession, TenantConfig } from "../../../shared/types";
import type { ClientRecord } from "../../../shared/schemas/clients";
import type { ConnectionRecord } from "../../../shared/schemas/connections";
import type { UserRecord } from "../../../shared/schemas/users";
import type { AppContext } from "../../context";
import { newMethodId } from "../../management/users/authentication-methods";
import { finishLogin } from "../../oauth/authorize/complete";
import { tenantObject } from "../../tenant/stubs";
import { loginDatabaseConnection } from "../connection";
import type { FormFailure } from "../pages/login-page";
import { WebAuthnPage } from "../pages/webauthn-pages";
import { EXPIRED_LOGIN, sendMessage, sendPage } from "../render";
import { submittedForm } from "../transaction";
import { loadMfa, type MfaContext, mfaAudit, submittedMfa } from "./context";
import { registerOffer } from "./gate";
import { withQuery } from "./policy";
import { afterSatisfied, nextStep, registerPasskeyOffer } from "./steps";
import { authenticationOptions, parseCredential, registrationOptions, verifyAssertion, verifyRegistration } from "./webauthn";
import { credentialName, webauthnMethod } from "./webauthn-flow";

/**
 * Passkeys (issue 12 point 5): the first factor on the login page (discoverable credential, conditional UI
 * autofill and a button), and an enrollment offer after a password login. Switched on per database
 * connection with the reference platform's options: `authentication_methods.passkey.enabled`, and
 * `passkey_options.{challenge_ui, progressive_enrollment_enabled}`.
 */

export interface PasskeySettings {
  enabled: boolean;
  /** `both` (autofill and button), `autofill` or `button`. @default "both" */
  challengeUi: "both" | "autofill" | "button";
  /** Offer to create a passkey after a password login. @default false */
  progressiveEnrollment: boolean;
}

const record = (value: unknown): Record<string, unknown> => (value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

export function passkeySettings(connection: Pick<ConnectionRecord, "options"> | null): PasskeySettings {
  const options = record(connection?.options);
  const enabled = record(record(options.authentication_methods).passkey).enabled === true;
  const passkey = record(options.passkey_options);
  const ui = passkey.challenge_ui;
  return { enabled, challengeUi: ui === "autofill" || ui === "button" ? ui : "both", progressiveEnrollment: enabled && passkey.progressive_enrollment_enabled === true };
}

const settingsFor = (config: TenantConfig, client: ClientRecord | null | undefined) =>
  passkeySettings(client ? loginDatabaseConnection(config, client) : null);

/** What the login page needs to offer passkeys; null when the connection does not enable them. */
export async function loginPasskeyOptions(c: AppContext, config: TenantConfig, client: ClientRecord, loginSession: LoginSession): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; autofill: boolean; button: boolean } | null> {
  const settings = settingsFor(config, client);
  if (!settings.enabled) return null;
  const options = await authenticationOptions(c, { purpose: "passkey-login", subject: loginSession.id, credentials: [], userVerification: "required" });
  return { options, autofill: settings.challengeUi !== "button", button: settings.challengeUi !== "autofill" };
}

const PASSKEY_FAILED = { code: "PASSKEY_FAILED", message: "That passkey could not be verified. Try again, or use your password." } as const;

/**
 * POST /u2/login/passkey?state=<login session>: a discoverable passkey as the first factor. The assertion
 * must sign this login's challenge (consumed once), verify the user (UV), come from a passkey of this tenant
 * whose user handle matches, and move its counter forward. A verified passkey counts as multi-factor
 * (possession plus the device's verification), so the MFA policy is met; the login completes at once.
 */
export async function passkeyLoginSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedForm(c, "login");
  if (submitted instanceof Response) return submitted;
  const { t, form } = submitted;
  const fail = () => sendMessage(c, t.shell, { ...PASSKEY_FAILED, title: "Passkey not accepted", retryHref: `/u2/login?state=${encodeURIComponent(t.state)}` }, 403);
  if (!settingsFor(t.config, t.client).enabled) return fail();
  const response = parseCredential<AuthenticationResponseJSON>(form.credential);
  if (!response) return fail();
  const stub = tenantObject(c.env, c.var.tenant.id);
  const method = await stub.authenticationMethods().findByCredentialId(response.id);
  if (method?.type !== "passkey" || !method.confirmed) return fail();
  if (response.response.userHandle && response.response.userHandle !== method.user_handle) return fail();
  const verified = await verifyAssertion(c, "passkey-login", t.loginSession.id, response, method, true);
  if (!verified?.userVerified) return fail();
  if (!(await stub.mfa().recordAssertion(method.id, verified.newCounter))) return fail();
  const user = await stub.users().get(method.user_id);
  if (!user) return fail();
  if (user.blocked) {
    return sendMessage(c, t.shell, { code: "USER_BLOCKED", title: "Login refused", message: "This account is blocked. Contact the application's administrator." }, 403);
  }
  const response2 = await finishLogin(c, t.loginSession, t.client, user, ["hwk", "user", "mfa"]);
  return response2 ?? sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
}

/** Whether this user gets the passkey offer now. */
async function wantsOffer(c: AppContext, config: TenantConfig, client: ClientRecord | null | undefined, user: UserRecord): Promise<boolean> {
  if (!settingsFor(config, client).progressiveEnrollment) return false;
  const methods = await tenantObject(c.env, c.var.tenant.id).authenticationMethods().list(user.user_id);
  return !methods.some((m) => m.type === "passkey");
}

// A password login (no MFA policy) with the offer on goes through an MFA transaction for the offer alone.
registerOffer((c, config, client, user) => wantsOffer(c, config, client, user));

registerPasskeyOffer(async (c, m) => {
  if (m.tx.kind !== "login" || m.tx.pending.passkey_offer_done || !(await wantsOffer(c, m.config, m.client, m.user))) return null;
  return c.redirect(withQuery("/u2/passkey/enrollment", m.query), 302);
});

async function renderOffer(c: AppContext, m: MfaContext, error?: FormFailure) {
  const methods = await tenantObject(c.env, c.var.tenant.id).authenticationMethods().list(m.user.user_id);
  const rpName = String(m.config.settings.friendly_name ?? m.client?.name ?? m.config.tenantId);
  const options = await registrationOptions(c, { kind: "passkey", subject: m.tx.id, user: m.user, rpName, existing: methods.filter((x) => x.credential_id) });
  const page = (
    <WebAuthnPage
      shell={m.shell}
      query={m.query}
      csrf={m.tx.csrf_token}
      title={m.shell.text.t("passkeys", "passkey-enrollment", "title")}
      subtitle={m.shell.text.t("passkeys", "passkey-enrollment", "description")}
      action="/u2/passkey/enrollment"
      mode="register"
      button={m.shell.text.t("passkeys", "passkey-enrollment", "buttonText")}
      options={options}
      hasAlternatives={false}
      skippable={true}
      {...(error ? { error } : {})}
    />
  );
  return sendPage(c, m.shell, page, error ? 400 : 200, { scripts: true });
}

/** GET /u2/passkey/enrollment?state=: the offer after a password login. */
export async function passkeyEnrollmentPage(c: AppContext): Promise<Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  if (!m.tx.pending.satisfied || m.tx.pending.passkey_offer_done || !(await wantsOffer(c, m.config, m.client, m.user))) return nextStep(c, m);
  return renderOffer(c, m);
}

/** POST /u2/passkey/enrollment: stores the passkey (discoverable, user-verifying), then the login completes. */
export async function passkeyEnrollmentSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedMfa(c);
  if (submitted instanceof Response) return submitted;
  const { m, form } = submitted;
  if (!m.tx.pending.satisfied || m.tx.pending.passkey_offer_done || !(await wantsOffer(c, m.config, m.client, m.user))) return nextStep(c, m);
  const response = parseCredential<RegistrationResponseJSON>(form.credential);
  const verified = response ? await verifyRegistration(c, "passkey", m.tx.id, response) : null;
  if (!verified) return renderOffer(c, m, { code: "WEBAUTHN_FAILED", message: "The passkey could not be created. Try again, or choose Not now.", text: "passkey-not-created" });
  const method = await webauthnMethod(c, m, newMethodId("passkey"), "passkey", verified, credentialName(undefined, "Passkey"));
  const enrolled = await tenantObject(c.env, c.var.tenant.id).mfa(mfaAudit(c, m)).enroll(m.tx.id, method, { passkey_offer_done: true }, m.config.guardian.factors);
  if (!enrolled.ok) return renderOffer(c, m, { code: "WEBAUTHN_DUPLICATE", message: enrolled.error.message });
  return afterSatisfied(c, { ...m, tx: { ...m.tx, pending: { ...m.tx.pending, passkey_offer_done: true } } });
}

