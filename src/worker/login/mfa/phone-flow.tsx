import { mfaSmsText } from "../../messaging/sms-templates";
import { phoneNumber } from "../../../shared/schemas/authentication-methods";
import type { AppContext } from "../../context";
import { newMethodId } from "../../management/users/authentication-methods";
import { DeliveryError } from "../../messaging/providers";
import { smsSender } from "../../messaging/senders";
import { tenantObject } from "../../tenant/stubs";
import type { FormFailure } from "../pages/login-page";
import { CodeChallengePage, PhoneEnrollmentPage } from "../pages/mfa-pages";
import { loadMfa, type MfaContext, mfaAudit, submittedMfa } from "./context";
import { issueCode, maskPhone, redeemCode } from "./one-time-codes";
import { amrAfter, withQuery } from "./policy";
import { afterSatisfied, checkCode, hasAlternatives, methodsOf, nextStep, recoveryCodesOrNext, render, satisfy, typedCode } from "./steps";
import { EMPTY_METHOD_FIELDS } from "../../../shared/schemas/authentication-methods";

/** Issue 12 point 4: SMS codes through the tenant's selected provider, for enrollment and for login. */

/** SMS codes one transaction may send (first one included). @default 5 */
export const MAX_SMS_PER_TRANSACTION = 5;
const PURPOSE = "sms-mfa";

const SMS_UNAVAILABLE: FormFailure = { code: "SMS_UNAVAILABLE", message: "Text messages cannot be sent right now. Try another method or try again later." };
const TOO_MANY_SMS: FormFailure = { code: "TOO_MANY_SMS", message: "Too many codes were sent. Wait a few minutes, then start again." };

/** The phone this transaction verifies: the one being enrolled, or the user's phone method at login. */
async function targetPhone(c: AppContext, m: MfaContext): Promise<{ phone: string; enrolling: boolean } | null> {
  const enrollment = m.tx.pending.enrollment;
  const { usable, enrollable } = await methodsOf(c, m);
  // A phone typed before the user had a factor to answer stops counting once they have one (issue 25 finding 1).
  if (enrollment?.factor === "sms" && enrollment.phone_number && enrollable.includes("sms")) return { phone: enrollment.phone_number, enrolling: true };
  if (m.tx.kind !== "login") return null;
  return usable.phone?.phone_number ? { phone: usable.phone.phone_number, enrolling: false } : null;
}

/** Sends a fresh code by SMS (the previous one stops counting as the newest); null on success. */
async function sendCode(c: AppContext, m: MfaContext, phone: string, enrolling: boolean): Promise<FormFailure | null> {
  const sent = m.tx.pending.sms_sent ?? 0;
  if (sent >= MAX_SMS_PER_TRANSACTION) return TOO_MANY_SMS;
  const sender = await smsSender(c, m.config);
  if (!sender) return SMS_UNAVAILABLE;
  await tenantObject(c.env, c.var.tenant.id).mfa().update(m.tx.id, { sms_sent: sent + 1 });
  m.tx.pending.sms_sent = sent + 1;
  const { code } = await issueCode(c, { purpose: PURPOSE, subject: m.tx.id, clientId: null, data: { phone } });
  const name = String(m.config.settings.friendly_name ?? m.client?.name ?? m.config.tenantId);
  try {
    await sender.send({ to: phone, body: await mfaSmsText(c, enrolling ? "enrollment" : "verification", code, name) });
    return null;
  } catch (error) {
    console.warn("SMS delivery failed:", error instanceof DeliveryError ? error.message : error);
    return SMS_UNAVAILABLE;
  }
}

async function renderEnrollment(c: AppContext, m: MfaContext, error?: FormFailure, phone?: string, status: 200 | 400 | 429 | 503 = 200) {
  const page = <PhoneEnrollmentPage shell={m.shell} query={m.query} csrf={m.tx.csrf_token} hasAlternatives={await hasAlternatives(c, m)} {...(phone ? { phone } : {})} {...(error ? { error } : {})} />;
  return render(c, m, page, status);
}

/** GET /u2/mfa/phone-enrollment?state=: asks for the phone number. */
export async function phoneEnrollmentPage(c: AppContext): Promise<Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  const { enrollable } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || !enrollable.includes("sms")) return nextStep(c, m);
  return renderEnrollment(c, m);
}

/** POST /u2/mfa/phone-enrollment?state=: a valid E.164 number gets a code; the challenge screen follows. */
export async function phoneEnrollmentSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedMfa(c);
  if (submitted instanceof Response) return submitted;
  const { m, form } = submitted;
  const { enrollable } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || !enrollable.includes("sms")) return nextStep(c, m);
  const parsed = phoneNumber.safeParse(form.phone_number ?? "");
  if (!parsed.success) return renderEnrollment(c, m, { code: "INVALID_PHONE", message: "Enter a phone number with its country code, e.g. +1 415 555 0100." }, form.phone_number, 400);
  const enrollment = { factor: "sms" as const, method_id: newMethodId("phone"), phone_number: parsed.data };
  const tx = await tenantObject(c.env, c.var.tenant.id).mfa().update(m.tx.id, { enrollment });
  if (!tx) return nextStep(c, m);
  const failure = await sendCode(c, { ...m, tx }, parsed.data, true);
  if (failure) return renderEnrollment(c, m, failure, parsed.data, failure === TOO_MANY_SMS ? 429 : 503);
  return c.redirect(withQuery("/u2/mfa/phone-challenge", m.query), 302);
}

async function renderChallenge(c: AppContext, m: MfaContext, phone: string, error?: FormFailure, status: 200 | 403 | 429 | 503 = 200) {
  const page = (
    <CodeChallengePage
      shell={m.shell}
      query={m.query}
      csrf={m.tx.csrf_token}
      action="/u2/mfa/phone-challenge"
      title={m.shell.text.t("mfa-sms", "mfa-sms-challenge", "title")}
      subtitle={m.shell.text.t("mfa-sms", "mfa-sms-challenge", "description", { phoneNumber: maskPhone(phone) })}
      label={m.shell.text.t("mfa-sms", "mfa-sms-challenge", "placeholder")}
      hint={m.shell.text.t("mfa-sms", "mfa-sms-challenge", "hint")}
      hasAlternatives={await hasAlternatives(c, m)}
      resend={true}
      {...(error ? { error } : {})}
    />
  );
  return render(c, m, page, status);
}

/** GET /u2/mfa/phone-challenge?state=: at login the first code is sent when the screen opens. */
export async function phoneChallengePage(c: AppContext): Promise<Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  const target = m.tx.pending.satisfied ? null : await targetPhone(c, m);
  if (!target) return nextStep(c, m);
  if (!target.enrolling && !m.tx.pending.sms_sent) {
    const failure = await sendCode(c, m, target.phone, false);
    if (failure) return renderChallenge(c, m, target.phone, failure, failure === TOO_MANY_SMS ? 429 : 503);
  }
  return renderChallenge(c, m, target.phone);
}

/**
 * POST /u2/mfa/phone-challenge?state=: `action=resend` sends a new code (at most five per transaction);
 * otherwise the code is checked under the MFA lock: enrollment stores the phone method, login completes.
 */
export async function phoneChallengeSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedMfa(c);
  if (submitted instanceof Response) return submitted;
  const { m, form } = submitted;
  const target = m.tx.pending.satisfied ? null : await targetPhone(c, m);
  if (!target) return nextStep(c, m);
  if (form.action === "resend") {
    const failure = await sendCode(c, m, target.phone, target.enrolling);
    return renderChallenge(c, m, target.phone, failure ?? undefined, failure ? (failure === TOO_MANY_SMS ? 429 : 503) : 200);
  }
  const typed = typedCode(form);
  // The code proves the phone it was sent to, and only that one (a code texted to a phone typed earlier must
  // not satisfy a challenge of another phone the user has since).
  const checked = await checkCode(c, m, "sms", async () => ((await redeemCode(c, PURPOSE, m.tx.id, null, typed))?.phone === target.phone ? true : "invalid"));
  if (!checked.ok) return renderChallenge(c, m, target.phone, checked.error, checked.status as 403 | 429);
  const amr = amrAfter(m.tx.pending.amr, "sms");
  if (!target.enrolling) {
    const { usable } = await methodsOf(c, m);
    if (usable.phone) await tenantObject(c.env, c.var.tenant.id).mfa().recordMethodUse(usable.phone.id);
    const satisfied = await satisfy(c, m, "sms", amr);
    return satisfied ? afterSatisfied(c, satisfied) : nextStep(c, m);
  }
  const enrollment = m.tx.pending.enrollment;
  if (!enrollment) return nextStep(c, m);
  const stub = tenantObject(c.env, c.var.tenant.id);
  const unused = await stub.mfa().unusedRecoveryCodes(m.user.user_id);
  const method = { ...EMPTY_METHOD_FIELDS, id: enrollment.method_id, user_id: m.user.user_id, type: "phone" as const, confirmed: true, name: null, phone_number: target.phone, preferred_authentication_method: "sms" };
  const enrolled = await stub.mfa(mfaAudit(c, m)).enroll(m.tx.id, method, { enrollment: undefined, satisfied: true, amr }, m.config.guardian.factors);
  if (!enrolled.ok) return nextStep(c, m);
  return recoveryCodesOrNext(c, { ...m, tx: { ...m.tx, pending: { ...m.tx.pending, enrollment: undefined, satisfied: true, amr } } }, unused);
}
