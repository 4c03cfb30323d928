import { now } from "../../shared/clock";
import { timingSafeEqualText } from "../../shared/crypto/compare";
import { randomId, randomToken } from "../../shared/crypto/random";
import type { AuthorizeRequest, DeviceLookup } from "../../shared/types";
import type { AppContext } from "../context";
import { LOGIN_SESSION_TTL_MS } from "../oauth/authorize/authorize";
import { normalizeUserCode } from "../oauth/device/codes";
import { clientIn, tenantConfig } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";
import { readCookie, setSecureCookie } from "./cookies";
import { clientIp } from "./ip-throttle";
import { ActivatePage, ConfirmDevicePage } from "./pages/device-pages";
import { sendMessage, sendPage, shellFor } from "./render";
import { hashSecret } from "./session";
import { readForm } from "./transaction";

/**
 * The device flow's universal login pages (RFC 8628 §3.3): /activate takes the user code, shows what the
 * device asks for, and on confirmation starts an ordinary login session whose authorization response goes to
 * /activate/callback on this host; the callback trades that code for the device's approval in one commit.
 * Everything between (password, sign-up, MFA, organizations, post-login actions) is the normal login.
 */

/** Double-submit CSRF cookie of the /activate forms (Strict: a cross-site post never carries it). */
const DEVICE_CSRF_COOKIE = "gh_device_csrf";

const MESSAGES = {
  unknown: { code: "INVALID_USER_CODE", message: "That code is not valid or has expired. Check your device and try again." },
  throttled: { code: "TOO_MANY_ATTEMPTS", message: "Too many attempts. Wait a few minutes and try again." },
  csrf: { code: "INVALID_CSRF", message: "Your session could not be verified. Reload the page and try again." },
} as const;

/** Where the login of a device request answers: this host, the device request named in the query. */
export const deviceCallbackUri = (issuer: string, deviceId: string) => `${issuer.replace(/\/?$/, "/")}activate/callback?device=${encodeURIComponent(deviceId)}`;

async function shell(c: AppContext) {
  return shellFor(c, await tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings));
}

/** The browser's CSRF token, set on first sight (HttpOnly, SameSite=Strict, scoped to /activate). */
function csrfToken(c: AppContext): string {
  const existing = readCookie(c, DEVICE_CSRF_COOKIE);
  if (existing) return existing;
  const token = randomToken(24);
  setSecureCookie(c, DEVICE_CSRF_COOKIE, token, { sameSite: "Strict", path: "/activate" });
  return token;
}

async function entryPage(c: AppContext, userCode: string | undefined, error?: { code: string; message: string }, status: 200 | 400 | 403 | 429 = 200) {
  const s = await shell(c);
  return sendPage(c, s, <ActivatePage shell={s} csrf={csrfToken(c)} {...(userCode ? { userCode } : {})} {...(error ? { error } : {})} />, status);
}

/** GET /activate[?user_code=...] (verification_uri and verification_uri_complete): the code form. */
export function activatePage(c: AppContext): Promise<Response> {
  return Promise.resolve(entryPage(c, c.req.query("user_code")));
}

/** The form of an /activate post with its CSRF check, and the device request its user code names. */
async function submittedCode(c: AppContext): Promise<{ lookup: DeviceLookup; userCode: string; form: Record<string, string> } | Response> {
  const form = await readForm(c);
  const cookie = readCookie(c, DEVICE_CSRF_COOKIE) ?? "";
  if (!form || !cookie || !(await timingSafeEqualText(form._csrf ?? "", cookie))) return entryPage(c, undefined, MESSAGES.csrf, 403);
  const typed = form.user_code ?? "";
  const userCode = normalizeUserCode(typed) ?? typed.toUpperCase().slice(0, 64);
  const lookup = await tenantObject(c.env, c.var.tenant.id).deviceCodes().lookUp(await hashSecret(userCode), clientIp(c) ?? "unknown");
  if (!lookup.ok) return entryPage(c, typed.slice(0, 64), MESSAGES[lookup.reason], lookup.reason === "throttled" ? 429 : 400);
  return { lookup, userCode, form };
}

/** POST /activate: the code entered; the confirmation screen with the application's name and scopes. */
export async function activateSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedCode(c);
  if (submitted instanceof Response) return submitted;
  const { lookup, userCode } = submitted;
  if (!lookup.ok) return entryPage(c, userCode);
  const config = await tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings);
  const client = clientIn(config, lookup.device.client_id);
  if (!client) return entryPage(c, userCode, MESSAGES.unknown, 400);
  const s = shellFor(c, config, client.name);
  const scopes = lookup.device.scope.split(" ").filter(Boolean);
  const page = <ConfirmDevicePage shell={s} csrf={csrfToken(c)} userCode={userCode} clientName={client.name} scopes={scopes} audience={lookup.device.audience} />;
  return sendPage(c, s, page);
}

/**
 * POST /activate/confirm: `deny` refuses the device (its next poll hears `access_denied`); `confirm` starts
 * a login session for the device's request and sends the browser to the login page.
 */
export async function activateConfirm(c: AppContext): Promise<Response> {
  const submitted = await submittedCode(c);
  if (submitted instanceof Response) return submitted;
  const { lookup, form } = submitted;
  if (!lookup.ok) return entryPage(c, undefined);
  const { device } = lookup;
  const stub = tenantObject(c.env, c.var.tenant.id);
  if (form.action !== "confirm") {
    await stub.deviceCodes().deny(device.id);
    const s = await shell(c);
    const t = (id: "title" | "description") => s.text.t("device-flow", "device-code-activation-denied", id);
    return sendMessage(c, s, { title: t("title"), message: t("description") }, 200);
  }
  const request: AuthorizeRequest = {
    client_id: device.client_id,
    redirect_uri: deviceCallbackUri(c.var.tenant.issuer, device.id),
    response_type: "code",
    response_mode: "query",
    scope: device.scope,
    ...(device.audience ? { audience: device.audience } : {}),
    // A PKCE challenge whose verifier nobody holds: the code can approve this device (the callback checks
    // no verifier) but can never be redeemed at /oauth/token, even if it leaked from the browser's history.
    code_challenge: randomToken(32),
    code_challenge_method: "S256",
    // The callback consumes the code in the commit that approves the device: a stored code, not a sealed one.
    stored_code: true,
  };
  const loginSession = await stub.logins().start({ id: randomId("ls_"), request, csrf_token: randomToken(24), expires_at: now() + LOGIN_SESSION_TTL_MS });
  return c.redirect(`/u2/login?state=${encodeURIComponent(loginSession.id)}`, 302);
}

/**
 * GET /activate/callback?device=...&code=...: the device request's login answered. The code (issued to this
 * callback for this device request only) is consumed and the request approved in one commit.
 */
export async function activateCallback(c: AppContext): Promise<Response> {
  const s = await shell(c);
  const deviceId = c.req.query("device") ?? "";
  const code = c.req.query("code");
  if (!code) {
    // Only the error code picks the text: a query's free text must not speak on this host's page (spoofing).
    const message = s.text.t("device-flow", "device-code-activation-denied", c.req.query("error") === "access_denied" ? "loginRefusedText" : "loginIncompleteText");
    return sendMessage(c, s, { code: "DEVICE_NOT_APPROVED", title: "Device not connected", message, retryHref: "/activate" }, 400);
  }
  const approved = await tenantObject(c.env, c.var.tenant.id).deviceCodes().approve(deviceId, await hashSecret(code), deviceCallbackUri(c.var.tenant.issuer, deviceId));
  if (!approved) {
    const message = s.text.t("device-flow", "device-code-activation-denied", "expiredText");
    return sendMessage(c, s, { code: "DEVICE_NOT_APPROVED", title: "Device not connected", message, retryHref: "/activate" }, 400);
  }
  const allowed = (id: "title" | "description") => s.text.t("device-flow", "device-code-activation-allowed", id);
  return sendMessage(c, s, { title: allowed("title"), message: allowed("description") }, 200);
}
