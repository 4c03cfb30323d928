import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { AppContext } from "../../context";
import { newMethodId } from "../../management/users/authentication-methods";
import { tenantObject } from "../../tenant/stubs";
import type { FormFailure } from "../pages/login-page";
import { WebAuthnPage } from "../pages/webauthn-pages";
import { sendPage } from "../render";
import { loadMfa, type MfaContext, mfaAudit, submittedMfa } from "./context";
import { amrAfter } from "./policy";
import { afterSatisfied, checkCode, hasAlternatives, methodsOf, nextStep, recoveryCodesOrNext, satisfy } from "./steps";
import { type CredentialKind, parseCredential, registrationOptions, userHandle, authenticationOptions, verifyAssertion, verifyRegistration, type VerifiedCredential } from "./webauthn";

/** Issue 12 point 5: security keys and platform authenticators as second factors (enrolled and challenged). */

const FAILED: FormFailure = { code: "WEBAUTHN_FAILED", message: "The security key or device could not be verified. Try again." };
const CLONED: FormFailure = { code: "WEBAUTHN_COUNTER", message: "This security key reported an unexpected counter and was refused. Contact your administrator." };

/** A kind's enrollment texts, in the page's language (`mfa-webauthn/mfa-webauthn-<roaming|platform>-enrollment`). */
const kindText = (m: MfaContext, kind: "webauthn-roaming" | "webauthn-platform") => {
  const screen = kind === "webauthn-roaming" ? "mfa-webauthn-roaming-enrollment" : "mfa-webauthn-platform-enrollment";
  const t = (id: "title" | "description" | "buttonText" | "defaultNickname") => m.shell.text.t("mfa-webauthn", screen, id);
  return { title: t("title"), subtitle: t("description"), button: t("buttonText"), name: t("defaultNickname") };
};

const factorOf = (c: AppContext): "webauthn-roaming" | "webauthn-platform" | null => {
  const factor = c.req.query("factor");
  return factor === "webauthn-roaming" || factor === "webauthn-platform" ? factor : null;
};

/** A name a person typed for a credential: trimmed, printable, at most 64 characters; else the default. */
export function credentialName(typed: string | undefined, fallback: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are dropped on purpose
  const clean = (typed ?? "").replace(/[\u0000-\u001f\u007f]/g, "").replace(/[\uD800-\uDFFF]/g, "").trim().slice(0, 64);
  return clean || fallback;
}

/** The method a verified registration becomes. */
export async function webauthnMethod(c: AppContext, m: Pick<MfaContext, "user">, id: string, kind: CredentialKind, verified: VerifiedCredential, name: string) {
  return {
    id,
    user_id: m.user.user_id,
    type: kind,
    confirmed: true,
    name,
    totp_secret_enc: null,
    phone_number: null,
    preferred_authentication_method: null,
    ...verified,
    user_handle: await userHandle(c.var.tenant.id, m.user.user_id),
    user_agent: c.req.header("user-agent")?.slice(0, 512) ?? null,
  };
}

const rpName = (m: MfaContext) => String(m.config.settings.friendly_name ?? m.client?.name ?? m.config.tenantId);

async function renderEnrollment(c: AppContext, m: MfaContext, kind: "webauthn-roaming" | "webauthn-platform", error?: FormFailure) {
  const { methods } = await methodsOf(c, m);
  const options = await registrationOptions(c, { kind, subject: m.tx.id, user: m.user, rpName: rpName(m), existing: methods.filter((x) => x.credential_id) });
  const text = kindText(m, kind);
  const page = (
    <WebAuthnPage
      shell={m.shell}
      query={m.query.replace("?", `?factor=${kind}&`)}
      csrf={m.tx.csrf_token}
      title={text.title}
      subtitle={text.subtitle}
      action="/u2/mfa/webauthn-enrollment"
      mode="register"
      button={text.button}
      options={options}
      askName={true}
      hasAlternatives={await hasAlternatives(c, m)}
      {...(error ? { error } : {})}
    />
  );
  return sendPage(c, m.shell, page, error ? 400 : 200, { scripts: true });
}

/** GET /u2/mfa/webauthn-enrollment?factor=webauthn-roaming|webauthn-platform&state=. */
export async function webauthnEnrollmentPage(c: AppContext): Promise<Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  const kind = factorOf(c);
  const { enrollable } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || !kind || !enrollable.includes(kind)) return nextStep(c, m);
  return renderEnrollment(c, m, kind);
}

/** POST /u2/mfa/webauthn-enrollment: the attestation is verified in the worker, the method stored with its public key. */
export async function webauthnEnrollmentSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedMfa(c);
  if (submitted instanceof Response) return submitted;
  const { m, form } = submitted;
  const kind = factorOf(c);
  const { enrollable, unused } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || !kind || !enrollable.includes(kind)) return nextStep(c, m);
  const response = parseCredential<RegistrationResponseJSON>(form.credential);
  const verified = response ? await verifyRegistration(c, kind, m.tx.id, response) : null;
  if (!verified) return renderEnrollment(c, m, kind, FAILED);
  const amr = amrAfter(m.tx.pending.amr, "hwk");
  const method = await webauthnMethod(c, m, newMethodId(kind), kind, verified, credentialName(form.friendly_name, kindText(m, kind).name));
  const enrolled = await tenantObject(c.env, c.var.tenant.id).mfa(mfaAudit(c, m)).enroll(m.tx.id, method, { satisfied: true, amr }, m.config.guardian.factors);
  if (!enrolled.ok) return renderEnrollment(c, m, kind, { code: "WEBAUTHN_DUPLICATE", message: enrolled.error.message });
  return recoveryCodesOrNext(c, { ...m, tx: { ...m.tx, pending: { ...m.tx.pending, satisfied: true, amr } } }, unused);
}

async function renderChallenge(c: AppContext, m: MfaContext, error?: FormFailure, status: 200 | 400 | 403 | 429 = 200) {
  const { usable } = await methodsOf(c, m);
  const options = await authenticationOptions(c, { purpose: "webauthn-mfa", subject: m.tx.id, credentials: usable.webauthn, userVerification: "preferred" });
  const page = (
    <WebAuthnPage
      shell={m.shell}
      query={m.query}
      csrf={m.tx.csrf_token}
      title={m.shell.text.t("mfa-webauthn", "mfa-webauthn-challenge", "title")}
      subtitle={m.shell.text.t("mfa-webauthn", "mfa-webauthn-challenge", "description")}
      action="/u2/mfa/webauthn-challenge"
      mode="authenticate"
      button={m.shell.text.t("mfa-webauthn", "mfa-webauthn-challenge", "buttonText")}
      options={options}
      hasAlternatives={await hasAlternatives(c, m)}
      {...(error ? { error } : {})}
    />
  );
  return sendPage(c, m.shell, page, status, { scripts: true });
}

/** GET /u2/mfa/webauthn-challenge?state=. */
export async function webauthnChallengePage(c: AppContext): Promise<Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  const { usable } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || m.tx.kind !== "login" || usable.webauthn.length === 0) return nextStep(c, m);
  return renderChallenge(c, m);
}

/**
 * POST /u2/mfa/webauthn-challenge: the assertion must come from one of this user's credentials, sign the
 * challenge issued for this transaction (consumed once), and move the signature counter forward (clone
 * detection, as one conditional update in the object). Failures count toward the MFA lock.
 */
export async function webauthnChallengeSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedMfa(c);
  if (submitted instanceof Response) return submitted;
  const { m, form } = submitted;
  const { usable } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || m.tx.kind !== "login" || usable.webauthn.length === 0) return nextStep(c, m);
  const response = parseCredential<AuthenticationResponseJSON>(form.credential);
  const method = response ? usable.webauthn.find((x) => x.credential_id === response.id) : undefined;
  let cloned = false;
  const checked = await checkCode(c, m, "webauthn", async () => {
    if (!response || !method) return "invalid";
    const verified = await verifyAssertion(c, "webauthn-mfa", m.tx.id, response, method, false);
    if (!verified) return "invalid";
    if (!(await tenantObject(c.env, c.var.tenant.id).mfa().recordAssertion(method.id, verified.newCounter))) {
      cloned = true;
      return "invalid";
    }
    return true;
  });
  if (!checked.ok) return renderChallenge(c, m, cloned ? CLONED : checked.status === 429 ? checked.error : FAILED, checked.status as 403 | 429);
  const satisfied = await satisfy(c, m, "webauthn", amrAfter(m.tx.pending.amr, "hwk"));
  return satisfied ? afterSatisfied(c, satisfied) : nextStep(c, m);
}
