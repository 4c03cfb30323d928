import type { Json } from "../../../shared/types";
import type { AppContext } from "../../context";
import { MAX_BODY_BYTES, readBodyText } from "../../http/body";
import { readCookie } from "../../login/cookies";
import { configOf } from "../../login/connection";
import { EXPIRED_LOGIN, sendMessage, shellFor } from "../../login/render";
import { hashSecret } from "../../login/session";
import { CONTINUE_COOKIE, type SuspendedLogin } from "../../actions/redirect-state";
import { clientIn } from "../../tenant/config-cache";
import { tenantObject } from "../../tenant/stubs";
import { readLoginSession } from "../../tenant/login-state";
import { issueAuthorizationResponse, resumeInteractiveLogin } from "./complete";

/** A body the external page posted back, as `event.request.body` (form fields or a JSON object). */
async function postedBody(c: AppContext): Promise<Record<string, Json> | null> {
  if (c.req.method !== "POST") return {};
  let text: string;
  try {
    text = await readBodyText(c.req.raw, () => new Error("too large"));
  } catch {
    return null;
  }
  if ((c.req.header("content-type") ?? "").includes("application/json")) {
    try {
      const parsed = JSON.parse(text) as unknown;
      return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, Json>) : null;
    } catch {
      return null;
    }
  }
  return Object.fromEntries(new URLSearchParams(text));
}

/**
 * GET and POST /continue (issue 32 point 3, the reference platform's endpoint): the browser comes back from
 * a post-login action's redirect with the `state` it was sent with, in the query or the posted body. The
 * suspension is consumed once, only by the browser that was sent away (its continue cookie); then the
 * redirecting action's `onContinuePostLogin` runs with `event.request.query`/`body` of this request, the
 * actions after it run, and the login completes as it would have. Anything else is the expired-login page.
 */
export async function continueEndpoint(c: AppContext): Promise<Response> {
  const config = await configOf(c);
  const expired = () => sendMessage(c, shellFor(c, config), EXPIRED_LOGIN, 400);
  const body = await postedBody(c);
  if (body === null) return sendMessage(c, shellFor(c, config), { code: "INVALID_REQUEST", title: "Invalid request", message: `The request body is not valid (at most ${MAX_BODY_BYTES} bytes of form fields or a JSON object)` }, 400);
  const state = c.req.query("state") ?? (typeof body.state === "string" ? body.state : "");
  const binding = readCookie(c, CONTINUE_COOKIE) ?? "";
  if (!state || !binding || state.length > 200) return expired();
  const stub = tenantObject(c.env, c.var.tenant.id);
  const taken = await stub.actions().resumeLogin(await hashSecret(state), await hashSecret(binding));
  if (!taken.ok) return expired();
  const login = JSON.parse(taken.resume) as SuspendedLogin;
  const client = clientIn(config, login.client_id);
  const user = await stub.users().get(login.user_id);
  if (!client || !user || user.blocked) return expired();
  const resume = { dispatch: login.dispatch, state, body };
  if (login.flow === "sso") {
    // The browser session the login rode on must still be live (not logged out or revoked meanwhile).
    if (login.session_id && !(await stub.sessions().get(login.session_id))) return expired();
    return issueAuthorizationResponse(c, login.request, client, user, login.session_id, login.auth_time, { consented: true, resume });
  }
  const loginSession = await readLoginSession(c, login.login_session_id);
  const live = loginSession && (loginSession.state === "pending" || (login.mfa_transaction_id && loginSession.state === "awaiting_mfa"));
  if (!loginSession || !live) return expired();
  const how = { ...(login.amr ? { amr: login.amr } : {}), ...(login.mfa_transaction_id ? { mfaTransactionId: login.mfa_transaction_id } : {}), resume };
  return (await resumeInteractiveLogin(c, loginSession, client, user, how)) ?? expired();
}
