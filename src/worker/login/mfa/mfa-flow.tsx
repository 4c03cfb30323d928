import type { AppContext } from "../../context";
import { tenantObject } from "../../tenant/stubs";
import type { FormFailure } from "../pages/login-page";
import { CodeChallengePage, type FactorChoice, FactorChoicePage } from "../pages/mfa-pages";
import { loadMfa, type MfaContext, mfaAudit, submittedMfa } from "./context";
import { amrAfter, ENROLL_PATH, FACTOR_LABELS, withQuery } from "./policy";
import { recoveryCodeHash } from "./recovery-codes";
import { afterSatisfied, checkCode, methodsOf, nextStep, recoveryCodesOrNext, render, satisfy, typedCode } from "./steps";

/** GET /u2/mfa?state=: the entry of every MFA transaction (login and ticket). */
export async function mfaEntryPage(c: AppContext): Promise<Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  return nextStep(c, m);
}

/**
 * GET /u2/mfa/factors?state=: "Try another method" during a challenge (the user's other methods and a
 * recovery code), or the factor choice of an enrollment (SPEC §4.2: shown when more than one is enabled).
 */
export async function factorsPage(c: AppContext): Promise<Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  if (m.tx.pending.satisfied) return nextStep(c, m);
  const { usable, enrollable } = await methodsOf(c, m);
  const choices: FactorChoice[] = [];
  const challenging = m.tx.kind === "login" && (usable.totp || usable.phone || usable.webauthn.length);
  const t = (id: Parameters<typeof m.shell.text.t<"mfa", "mfa-login-options">>[2]) => m.shell.text.t("mfa", "mfa-login-options", id);
  const named = (factor: keyof typeof FACTOR_LABELS) => ({ label: t(FACTOR_LABELS[factor].label), description: t(FACTOR_LABELS[factor].description) });
  if (challenging) {
    if (usable.webauthn.length) choices.push({ href: withQuery("/u2/mfa/webauthn-challenge", m.query), label: t("authenticatorNamesWebauthn"), description: t("authenticatorDescriptionWebauthn") });
    if (usable.totp) choices.push({ href: withQuery("/u2/mfa/totp-challenge", m.query), ...named("otp") });
    if (usable.phone) choices.push({ href: withQuery("/u2/mfa/phone-challenge", m.query), ...named("sms") });
    if (usable.recovery) choices.push({ href: withQuery("/u2/mfa/recovery-code", m.query), ...named("recovery-code") });
  } else {
    for (const factor of enrollable) choices.push({ href: withQuery(ENROLL_PATH[factor], m.query), ...named(factor) });
  }
  if (choices.length === 0) return nextStep(c, m);
  const screen = challenging ? "mfa-login-options" : "mfa-begin-enroll-options";
  const title = m.shell.text.t("mfa", screen, "title");
  const subtitle = m.shell.text.t("mfa", screen, "description");
  return render(c, m, <FactorChoicePage shell={m.shell} title={title} subtitle={subtitle} choices={choices} />);
}

/** POST /u2/mfa/continue?state=: after the recovery codes were shown (or an offer declined). */
export async function continueSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedMfa(c);
  if (submitted instanceof Response) return submitted;
  const { m, form } = submitted;
  // "Not now" answers the passkey offer, which comes only after the factor (issue 25: no step out of order).
  if (form.action === "skip-passkey" && m.tx.pending.satisfied) {
    const tx = await tenantObject(c.env, c.var.tenant.id).mfa().update(m.tx.id, { passkey_offer_done: true });
    if (tx) return nextStep(c, { ...m, tx });
  }
  return nextStep(c, m);
}

async function renderRecovery(c: AppContext, m: MfaContext, error?: FormFailure, status: 200 | 403 | 429 = 200) {
  const page = (
    <CodeChallengePage
      shell={m.shell}
      query={m.query}
      csrf={m.tx.csrf_token}
      action="/u2/mfa/recovery-code"
      title={m.shell.text.t("mfa-recovery-code", "mfa-recovery-code-challenge", "title")}
      subtitle={m.shell.text.t("mfa-recovery-code", "mfa-recovery-code-challenge", "description")}
      label={m.shell.text.t("mfa-recovery-code", "mfa-recovery-code-challenge", "placeholder")}
      hint={m.shell.text.t("mfa-recovery-code", "mfa-recovery-code-challenge", "hint")}
      numeric={false}
      hasAlternatives={true}
      {...(error ? { error } : {})}
    />
  );
  return render(c, m, page, status);
}

/** GET /u2/mfa/recovery-code?state=. */
export async function recoveryCodePage(c: AppContext): Promise<Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  const { usable } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || m.tx.kind !== "login" || !usable.recovery) return nextStep(c, m);
  return renderRecovery(c, m);
}

/**
 * POST /u2/mfa/recovery-code?state=: a recovery code is used once (one conditional update in the object)
 * under the same lock as other codes; when it was the last one, a new set is shown.
 */
export async function recoveryCodeSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedMfa(c);
  if (submitted instanceof Response) return submitted;
  const { m, form } = submitted;
  const { usable } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || m.tx.kind !== "login" || !usable.recovery) return nextStep(c, m);
  const stub = tenantObject(c.env, c.var.tenant.id);
  const hash = await recoveryCodeHash(typedCode(form));
  const checked = await checkCode(c, m, "recovery-code", async () => ((await stub.mfa(mfaAudit(c, m)).useRecoveryCode(m.user.user_id, hash)) ? true : "invalid"));
  if (!checked.ok) return renderRecovery(c, m, checked.error, checked.status as 403 | 429);
  const satisfied = await satisfy(c, m, "recovery-code", amrAfter(m.tx.pending.amr, "recovery-code"));
  if (!satisfied) return nextStep(c, m);
  const left = await stub.mfa().unusedRecoveryCodes(m.user.user_id);
  return left > 0 ? afterSatisfied(c, satisfied) : recoveryCodesOrNext(c, satisfied, 0, true);
}
