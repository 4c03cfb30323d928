import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { MfaPending } from "../../../shared/types";
import type { AppContext } from "../../context";
import type { SuspendedDispatch } from "../../actions/post-login";
import { finishMfaLogin } from "../../oauth/authorize/complete";
import { tenantObject, userObject } from "../../tenant/stubs";
import type { FormFailure } from "../pages/login-page";
import { RecoveryCodesPage } from "../pages/mfa-pages";
import { EXPIRED_LOGIN, sendMessage, sendPage } from "../render";
import { clearMfaCookie, type MfaContext, mfaAudit } from "./context";
import { enrollableFactors, ENROLL_PATH, hasAnyMethod, isMfaRequired, narrowForAction, usableMethods, withQuery } from "./policy";
import { newRecoveryCodes, recoveryCodeHash } from "./recovery-codes";

/**
 * Where an MFA transaction goes next, decided on the server from its state alone (never from the URL the
 * browser came from): a challenge of the user's strongest usable method, an enrollment, the recovery codes
 * to save, an offer, or the end (the login completes; a ticket enrollment says it is done).
 */

/** The user's methods and what this transaction may do with them. */
export async function methodsOf(c: AppContext, m: MfaContext) {
  const stub = tenantObject(c.env, c.var.tenant.id);
  const [methods, unused] = await Promise.all([stub.authenticationMethods().list(m.user.user_id), stub.mfa().unusedRecoveryCodes(m.user.user_id)]);
  // A post-login action's step (issue 32) narrows what this transaction may challenge or enroll.
  const { usable, enrollable } = narrowForAction(
    usableMethods(m.config, methods, unused),
    enrollableFactors(m.config, m.tx, methods, m.tx.pending.ticket_factor),
    m.tx.pending.action,
  );
  return { methods, usable, enrollable, unused };
}

/** Whether the screen should offer "Try another method". */
export async function hasAlternatives(c: AppContext, m: MfaContext): Promise<boolean> {
  const { usable, enrollable } = await methodsOf(c, m);
  if (m.tx.kind === "login" && hasAnyMethod(usable)) {
    return [usable.totp, usable.phone, usable.webauthn.length ? true : null, usable.recovery ? true : null].filter(Boolean).length > 1;
  }
  return enrollable.length > 1;
}

const NO_FACTOR = {
  code: "MFA_UNAVAILABLE",
  title: "Verification unavailable",
  message: "This application requires a second factor, but none is enabled. Contact the application's administrator.",
} as const;

/** GET /u2/mfa?state=: sends the browser to the step the transaction is at. */
export async function nextStep(c: AppContext, m: MfaContext): Promise<Response> {
  if (m.tx.pending.satisfied) return afterSatisfied(c, m);
  const { usable, enrollable } = await methodsOf(c, m);
  const step = m.tx.pending.action;
  if (step?.mode === "enroll" && step.phase === "challenge" && !hasAnyMethod(usable)) {
    // Nothing left to answer first (the user's factors were removed meanwhile): the enrollment itself.
    const tx = await tenantObject(c.env, c.var.tenant.id).mfa().update(m.tx.id, { action: { ...step, phase: "enroll" } });
    return tx ? nextStep(c, { ...m, tx }) : sendMessage(c, m.shell, EXPIRED_LOGIN, 400);
  }
  if (m.tx.kind === "login" && hasAnyMethod(usable)) {
    const path = usable.webauthn.length ? "/u2/mfa/webauthn-challenge" : usable.totp ? "/u2/mfa/totp-challenge" : "/u2/mfa/phone-challenge";
    return c.redirect(withQuery(path, m.query), 302);
  }
  if (enrollable.length === 0) {
    if (m.tx.kind === "ticket") {
      await tenantObject(c.env, c.var.tenant.id).mfa().complete(m.tx.id);
      clearMfaCookie(c);
      return sendMessage(c, m.shell, {
        title: m.shell.text.t("mfa", "mfa-enroll-result", "alreadyEnrolledTitle"),
        message: m.shell.text.t("mfa", "mfa-enroll-result", "alreadyEnrolledDescription"),
      }, 200);
    }
    return sendMessage(c, m.shell, NO_FACTOR, 403);
  }
  if (enrollable.length === 1) return c.redirect(withQuery(ENROLL_PATH[enrollable[0] as keyof typeof ENROLL_PATH], m.query), 302);
  return c.redirect(withQuery("/u2/mfa/factors", m.query), 302);
}

/**
 * The factor was verified (or enrolled). A ticket enrollment ends here; a login goes on to the passkey
 * offer when the tenant enables it, then completes.
 */
export async function afterSatisfied(c: AppContext, m: MfaContext): Promise<Response> {
  const stub = tenantObject(c.env, c.var.tenant.id);
  if (m.tx.kind === "ticket") {
    await stub.mfa().complete(m.tx.id);
    clearMfaCookie(c);
    return sendMessage(c, m.shell, { title: m.shell.text.t("mfa", "mfa-enroll-result", "title"), message: m.shell.text.t("mfa", "mfa-enroll-result", "description") }, 200);
  }
  const step = m.tx.pending.action;
  if (step?.mode === "enroll" && step.phase !== "enroll") {
    // An action's enrollment (issue 32): the challenge the user answered first (issue 25 finding 1) opens it.
    const tx = await stub.mfa().update(m.tx.id, { satisfied: false, action: { ...step, phase: "enroll" } });
    return tx ? nextStep(c, { ...m, tx }) : sendMessage(c, m.shell, EXPIRED_LOGIN, 400);
  }
  const offer = await passkeyOfferFor(c, m);
  if (offer) return offer;
  const { loginSession, client } = m;
  if (!loginSession || !client) return sendMessage(c, m.shell, EXPIRED_LOGIN, 400);
  // finishMfaLogin clears the MFA cookie when the login completes; until then (the post-login organization
  // prompt) the cookie still binds the verified transaction to this browser.
  const response = await finishMfaLogin(c, m.tx.id, loginSession, client, m.user, m.tx.pending.amr ?? ["pwd"], step?.dispatch as SuspendedDispatch | undefined);
  if (response) return response;
  clearMfaCookie(c);
  return sendMessage(c, m.shell, EXPIRED_LOGIN, 400);
}

/** Hook for the passkey enrollment offer (issue 12 point 5); set by the passkey module. */
let passkeyOffer: ((c: AppContext, m: MfaContext) => Promise<Response | null>) | null = null;
export const registerPasskeyOffer = (fn: typeof passkeyOffer) => {
  passkeyOffer = fn;
};
const passkeyOfferFor = (c: AppContext, m: MfaContext) => (passkeyOffer ? passkeyOffer(c, m) : Promise.resolve(null));

/** Marks the factor verified: satisfied, amr recorded, `gd_auth_succeed` logged (one commit). */
export async function satisfy(c: AppContext, m: MfaContext, factor: string, amr: string[]): Promise<MfaContext | null> {
  const tx = await tenantObject(c.env, c.var.tenant.id).mfa(mfaAudit(c, m)).satisfy(m.tx.id, amr, factor);
  return tx ? { ...m, tx } : null;
}

/**
 * After an enrollment, or after the last recovery code was used: a new set of recovery codes when the
 * tenant enables them and the user has none left. Shown once (only hashes are stored), then `continue`.
 */
export async function recoveryCodesOrNext(c: AppContext, m: MfaContext, unusedBefore: number, regenerated = false): Promise<Response> {
  if (!m.config.guardian.factors["recovery-code"] || unusedBefore > 0) return afterSatisfied(c, m);
  const codes = newRecoveryCodes();
  await tenantObject(c.env, c.var.tenant.id).mfa().replaceRecoveryCodes(m.user.user_id, await Promise.all(codes.map(recoveryCodeHash)));
  return sendPage(c, m.shell, <RecoveryCodesPage shell={m.shell} query={m.query} csrf={m.tx.csrf_token} codes={codes} regenerated={regenerated} />);
}

export const INVALID_CODE: FormFailure = { code: "INVALID_CODE", message: "That code is not right. Check it and try again." };
export const CODE_REUSED: FormFailure = { code: "CODE_ALREADY_USED", message: "That code was already used. Wait for the next one, then try again." };
export const TOO_MANY_ATTEMPTS: FormFailure = { code: "TOO_MANY_ATTEMPTS", message: "Too many wrong codes. Wait a few minutes, then try again." };

export type Verdict = true | "invalid" | "reused";

/**
 * One code check under the user's MFA lock (issue 12 point 3: 5 wrong codes in 5 minutes, in the user
 * object): refused while locked; counted before `verify` runs, forgiven after a success; a wrong code is
 * logged (`gd_auth_failed`).
 */
export async function checkCode(c: AppContext, m: MfaContext, factor: string, verify: () => Promise<Verdict>): Promise<{ ok: true } | { ok: false; error: FormFailure; status: ContentfulStatusCode }> {
  const attempts = userObject(c.env, c.var.tenant.id, m.user.user_id).mfa();
  const admission = await attempts.begin();
  if (!admission.admitted) return { ok: false, error: TOO_MANY_ATTEMPTS, status: 429 };
  const verdict = await verify();
  if (verdict === true) {
    await attempts.settle(true);
    return { ok: true };
  }
  await tenantObject(c.env, c.var.tenant.id).mfa(mfaAudit(c, m)).recordFailure(m.user.user_id, factor, verdict);
  return { ok: false, error: verdict === "reused" ? CODE_REUSED : INVALID_CODE, status: 403 };
}

/** A code as typed: spaces and hyphens dropped. */
export const typedCode = (form: Record<string, string>) => (form.code ?? "").replace(/[\s-]/g, "");

/** Renders a page, sending the security headers of the login pages. */
export const render = (c: AppContext, m: MfaContext, page: JSX.Element, status: ContentfulStatusCode = 200) => sendPage(c, m.shell, page, status);

/** Whether MFA would be asked at this login (the policy), for callers outside this folder. */
export { isMfaRequired };

/** The first-factor facts a transaction starts with. */
export const firstFactor = (amr: string[]): MfaPending => ({ amr });
