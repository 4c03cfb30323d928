import type { AuthorizeRequest, LoginSession, MfaActionStep, TenantConfig } from "../../../shared/types";
import type { UserRecord } from "../../../shared/schemas/users";
import type { ActionMfa } from "../../actions/post-login";
import type { AppContext } from "../../context";
import { tenantObject } from "../../tenant/stubs";
import { beginLoginMfa, mfaEntry } from "./context";
import { mfaFromFirstFactor } from "./gate";
import { canEnrollOneOf, hasAnyMethod, narrowForAction, usableMethods } from "./policy";

/**
 * The second factor a post-login action asked for (issue 32 point 3), handed to the MFA state machine: the
 * login waits in `awaiting_mfa` with the step in its MFA transaction, and once the step is done the pipeline
 * resumes after the asking action (`afterSatisfied` → `finishMfaLogin`). What the step may use is checked
 * here first, so a login never waits on a screen it cannot pass: a challenge needs one of the named factors
 * enrolled, an enrollment a named factor the tenant enables and the user does not hold yet.
 */

/** Where the login stands when the actions ask: an interactive login (maybe already in MFA), or an SSO answer. */
export type ActionMfaLogin =
  | { kind: "interactive"; loginSession: LoginSession; amr?: string[] | undefined; mfaTransactionId?: string | undefined }
  | { kind: "sso"; request: AuthorizeRequest; sessionId: string | null };

/** Starts the step: the redirect into /u2/mfa, or why the login cannot take it (the caller refuses the login). */
export async function startActionMfa(c: AppContext, config: TenantConfig, user: UserRecord, asked: ActionMfa, login: ActionMfaLogin): Promise<Response | { refused: string }> {
  const stub = tenantObject(c.env, c.var.tenant.id);
  const [methods, unused, amr] = await Promise.all([
    stub.authenticationMethods().list(user.user_id),
    stub.mfa().unusedRecoveryCodes(user.user_id),
    login.kind === "sso" && login.sessionId ? stub.mfa().sessionAmr(login.sessionId) : Promise.resolve(login.kind === "interactive" ? (login.amr ?? ["pwd"]) : ["pwd"]),
  ]);
  const usable = usableMethods(config, methods, unused);
  const dispatch = asked.dispatch as unknown as MfaActionStep["dispatch"];
  let step: MfaActionStep = { mode: asked.mode, factors: asked.factors, dispatch };
  // `google-authenticator`: the app's code; a user without one enrolls it (after answering a factor held).
  if (step.mode === "any" && step.factors && !hasAnyMethod(narrowForAction(usable, [], step).usable)) step = { ...step, mode: "enroll" };
  if (step.mode === "challenge" && !hasAnyMethod(narrowForAction(usable, [], step).usable)) {
    return { refused: `The user has no enrolled factor that api.authentication can challenge with (${(step.factors ?? []).join(", ")})` };
  }
  if (step.mode === "enroll") {
    if (!canEnrollOneOf(config, methods, step.factors ?? [])) {
      return { refused: `None of the factors api.authentication asked to enroll (${(step.factors ?? []).join(", ")}) is enabled for the tenant and not already enrolled by the user` };
    }
    // Issue 25 finding 1: a user who holds a factor answers it first, unless this login already passed MFA.
    step.phase = hasAnyMethod(usable) && !amr.includes("mfa") ? "challenge" : "enroll";
  }
  if (login.kind === "sso") {
    const started = await mfaFromFirstFactor(c, login.request, { user_id: user.user_id }, amr.length ? amr : ["pwd"], { action: step });
    return started ?? { refused: "The login could not continue" };
  }
  if (login.mfaTransactionId) {
    // The login is in MFA already (the tenant's policy, or an earlier action's step): the same transaction
    // takes the new step, and its browser binding (the MFA cookie) with it.
    const tx = await stub.mfa().update(login.mfaTransactionId, { satisfied: false, action: step });
    return tx ? c.redirect(mfaEntry(c, tx.id), 302) : { refused: "The login session has expired" };
  }
  const started = await beginLoginMfa(c, login.loginSession, user, { amr, action: step });
  return started ?? { refused: "The login session has expired" };
}
