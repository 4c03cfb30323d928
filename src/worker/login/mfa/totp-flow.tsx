import { now } from "../../../shared/clock";
import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { EMPTY_METHOD_FIELDS } from "../../../shared/schemas/authentication-methods";
import type { AppContext } from "../../context";
import { newMethodId } from "../../management/users/authentication-methods";
import { tenantObject, userObject } from "../../tenant/stubs";
import type { FormFailure } from "../pages/login-page";
import { CodeChallengePage, TotpEnrollmentPage } from "../pages/mfa-pages";
import { loadMfa, type MfaContext, mfaAudit, submittedMfa } from "./context";
import { amrAfter } from "./policy";
import { qrSvg } from "./qr";
import { afterSatisfied, checkCode, hasAlternatives, methodsOf, nextStep, recoveryCodesOrNext, render, satisfy, typedCode } from "./steps";
import { groupSecret, matchTotp, newTotpSecret, totpUri } from "./totp";

/** The name an authenticator app shows for the account: the tenant's friendly name, else its id. */
const issuerLabel = (m: MfaContext) => String(m.config.settings.friendly_name ?? m.config.tenantId);

const openSecret = async (c: AppContext, enc: string, methodId: string) =>
  (await fieldCipher(c.env.ENCRYPTION_KEY)).decrypt(enc, encryptionContext.totpSecret(methodId));

/**
 * The enrollment in progress, created on first view: a fresh 160-bit secret sealed under the method id it
 * will have, kept in the transaction (never in a cookie or the page's URL) until a code proves the app has it.
 */
async function pendingSecret(c: AppContext, m: MfaContext): Promise<{ methodId: string; secret: string } | null> {
  const current = m.tx.pending.enrollment;
  if (current?.factor === "otp" && current.totp_secret_enc) {
    return { methodId: current.method_id, secret: await openSecret(c, current.totp_secret_enc, current.method_id) };
  }
  const methodId = newMethodId("totp");
  const secret = newTotpSecret();
  const sealed = await (await fieldCipher(c.env.ENCRYPTION_KEY)).encrypt(secret, encryptionContext.totpSecret(methodId));
  const updated = await tenantObject(c.env, c.var.tenant.id).mfa().update(m.tx.id, { enrollment: { factor: "otp", method_id: methodId, totp_secret_enc: sealed } });
  return updated ? { methodId, secret } : null;
}

async function renderEnrollment(c: AppContext, m: MfaContext, pending: { secret: string }, error?: FormFailure, status: 200 | 403 | 429 = 200) {
  const account = m.user.email ?? m.user.user_id;
  const uri = totpUri(pending.secret, issuerLabel(m), account);
  const page = (
    <TotpEnrollmentPage
      shell={m.shell}
      query={m.query}
      csrf={m.tx.csrf_token}
      qrSvg={qrSvg(uri, `QR code to add ${account} to an authenticator app`)}
      secret={groupSecret(pending.secret)}
      hasAlternatives={await hasAlternatives(c, m)}
      {...(error ? { error } : {})}
    />
  );
  return render(c, m, page, status);
}

/** GET /u2/mfa/totp-enrollment?state=: the QR code and the manual key. */
export async function totpEnrollmentPage(c: AppContext): Promise<Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  const { enrollable } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || !enrollable.includes("otp")) return nextStep(c, m);
  const pending = await pendingSecret(c, m);
  if (!pending) return nextStep(c, m);
  return renderEnrollment(c, m, pending);
}

/** POST /u2/mfa/totp-enrollment?state=: a code from the app confirms the method (then recovery codes). */
export async function totpEnrollmentSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedMfa(c);
  if (submitted instanceof Response) return submitted;
  const { m, form } = submitted;
  const enrollment = m.tx.pending.enrollment;
  const { enrollable } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || !enrollable.includes("otp") || enrollment?.factor !== "otp" || !enrollment.totp_secret_enc) return nextStep(c, m);
  const secret = await openSecret(c, enrollment.totp_secret_enc, enrollment.method_id);
  const code = typedCode(form);
  const checked = await checkCode(c, m, "otp", async () => {
    const step = await matchTotp(secret, code, now());
    if (step === null) return "invalid";
    // The enrollment code is spent too: it cannot log in a second time within its window.
    return (await userObject(c.env, c.var.tenant.id, m.user.user_id).mfa().consumeTotpStep(enrollment.method_id, step)) ? true : "reused";
  });
  if (!checked.ok) return renderEnrollment(c, m, { secret }, checked.error, checked.status as 403 | 429);

  const stub = tenantObject(c.env, c.var.tenant.id);
  const unused = await stub.mfa().unusedRecoveryCodes(m.user.user_id);
  const amr = amrAfter(m.tx.pending.amr, "otp");
  const method = {
    ...EMPTY_METHOD_FIELDS,
    id: enrollment.method_id,
    user_id: m.user.user_id,
    type: "totp" as const,
    confirmed: true,
    name: null,
    totp_secret_enc: enrollment.totp_secret_enc,
  };
  const enrolled = await stub.mfa(mfaAudit(c, m)).enroll(m.tx.id, method, { enrollment: undefined, satisfied: true, amr }, m.config.guardian.factors);
  if (!enrolled.ok) return nextStep(c, m);
  const tx = { ...m.tx, pending: { ...m.tx.pending, enrollment: undefined, satisfied: true, amr } };
  return recoveryCodesOrNext(c, { ...m, tx }, unused);
}

async function renderChallenge(c: AppContext, m: MfaContext, error?: FormFailure, status: 200 | 403 | 429 = 200) {
  const page = (
    <CodeChallengePage
      shell={m.shell}
      query={m.query}
      csrf={m.tx.csrf_token}
      action="/u2/mfa/totp-challenge"
      title={m.shell.text.t("mfa-otp", "mfa-otp-challenge", "title")}
      subtitle={m.shell.text.t("mfa-otp", "mfa-otp-challenge", "description")}
      label={m.shell.text.t("mfa-otp", "mfa-otp-challenge", "placeholder")}
      hint={m.shell.text.t("mfa-otp", "mfa-otp-challenge", "hint")}
      hasAlternatives={await hasAlternatives(c, m)}
      {...(error ? { error } : {})}
    />
  );
  return render(c, m, page, status);
}

/** GET /u2/mfa/totp-challenge?state=: asks for the app's code. */
export async function totpChallengePage(c: AppContext): Promise<Response> {
  const m = await loadMfa(c);
  if (m instanceof Response) return m;
  const { usable } = await methodsOf(c, m);
  if (m.tx.pending.satisfied || m.tx.kind !== "login" || !usable.totp) return nextStep(c, m);
  return renderChallenge(c, m);
}

/**
 * POST /u2/mfa/totp-challenge?state=: the code must match the user's secret within about 30 seconds and
 * not have been used before (RFC 6238 §5.2); five wrong codes in five minutes lock MFA for the user.
 */
export async function totpChallengeSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedMfa(c);
  if (submitted instanceof Response) return submitted;
  const { m, form } = submitted;
  const { usable } = await methodsOf(c, m);
  const totp = usable.totp;
  if (m.tx.pending.satisfied || m.tx.kind !== "login" || !totp?.totp_secret_enc) return nextStep(c, m);
  const secret = await openSecret(c, totp.totp_secret_enc, totp.id);
  const code = typedCode(form);
  const checked = await checkCode(c, m, "otp", async () => {
    const step = await matchTotp(secret, code, now());
    if (step === null) return "invalid";
    return (await userObject(c.env, c.var.tenant.id, m.user.user_id).mfa().consumeTotpStep(totp.id, step)) ? true : "reused";
  });
  if (!checked.ok) return renderChallenge(c, m, checked.error, checked.status as 403 | 429);
  await tenantObject(c.env, c.var.tenant.id).mfa().recordMethodUse(totp.id);
  const satisfied = await satisfy(c, m, "otp", amrAfter(m.tx.pending.amr, "otp"));
  return satisfied ? afterSatisfied(c, satisfied) : nextStep(c, m);
}
