import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { LoginSession } from "../../shared/types";
import type { AppContext } from "../context";
import { finishLogin } from "../oauth/authorize/complete";
import { clientIn } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";
import { readLoginSession, storeLoginSession } from "../tenant/login-state";
import { configOf } from "./connection";
import { mfaEntry, passedMfaFor } from "./mfa/context";
import { invitationProblem } from "./organization";
import { OrganizationPage, type OrganizationPageProps } from "./pages/organization-page";
import { EXPIRED_LOGIN, sendMessage, sendPage } from "./render";
import { type LoginTransaction, loadTransaction, setCsrfCookie, submittedForm } from "./transaction";

/** The user's organizations, for the post-login prompt (at most 100, newest first). */
async function choicesFor(c: AppContext, userId: string) {
  const page = await tenantObject(c.env, c.var.tenant.id).organizations().userOrganizations(userId, { offset: 0, limit: 100 });
  return (page?.items ?? []).map((o) => ({ id: o.id, label: o.display_name ?? o.name }));
}

const NO_ORGANIZATIONS = {
  code: "NO_ORGANIZATIONS",
  title: "No organization",
  message: "Your account is not a member of any organization. Ask an administrator for an invitation.",
} as const;

async function render(c: AppContext, t: LoginTransaction, extra: Pick<OrganizationPageProps, "name" | "error"> = {}, status: ContentfulStatusCode = 200) {
  const props: OrganizationPageProps = { shell: t.shell, state: t.state, csrf: t.loginSession.csrf_token, clientName: t.client.name, ...extra };
  if (t.loginSession.user_id) {
    const choices = await choicesFor(c, t.loginSession.user_id);
    if (!choices.length) return sendMessage(c, t.shell, NO_ORGANIZATIONS, 403);
    props.choices = choices;
  }
  return sendPage(c, t.shell, <OrganizationPage {...props} />, status);
}

/**
 * Under an MFA policy the post-login prompt comes after the second factor (issue 12): the login session
 * then waits in `awaiting_mfa`, and only the browser that passed MFA for it may choose.
 */
const afterMfa = (c: AppContext) => async (loginSession: LoginSession) =>
  loginSession.state === "awaiting_mfa" && (await passedMfaFor(c, loginSession)) !== null;

/**
 * GET /u2/organization?state=<login session>: the organization prompt of a client whose
 * `organization_usage` is `require` (issue 11): the name before login (`pre_login_prompt`), or the user's
 * organizations once they have logged in (`post_login_prompt`, the login session then names the user).
 */
export async function organizationPage(c: AppContext): Promise<Response> {
  const t = await loadTransaction(c, afterMfa(c));
  if (t instanceof Response) return t;
  setCsrfCookie(c, t.loginSession);
  return render(c, t);
}

/**
 * POST /u2/organization?state=<login session>: records the organization on the login session. Before login
 * the name must exist, then the login page follows; after login the choice must be one of the user's
 * organizations, and the login completes in it (membership checked again by the gate).
 */
export async function organizationSubmit(c: AppContext): Promise<Response> {
  const submitted = await submittedForm(c, "organization", afterMfa(c));
  if (submitted instanceof Response) return submitted;
  const { t, form } = submitted;
  const orgs = tenantObject(c.env, c.var.tenant.id).organizations();
  const asked = (form.organization ?? "").trim();
  const heldUser = t.loginSession.user_id;
  const found = heldUser ? await orgs.membership(asked, heldUser) : asked ? await orgs.forLogin(asked) : null;
  if (!found) {
    const error = heldUser
      ? { code: "ORGANIZATION_NOT_FOUND", message: "Choose one of your organizations.", text: "organization-not-member" }
      : { code: "ORGANIZATION_NOT_FOUND", message: "We couldn't find an organization with that name." };
    return render(c, t, { name: asked, error }, 400);
  }
  await storeLoginSession(c, t.loginSession);
  if (!(await orgs.chooseForLogin(t.loginSession.id, { id: found.id, name: found.name }))) return sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
  if (!heldUser) {
    const page = t.loginSession.request.screen_hint === "signup" ? "signup" : "login";
    return c.redirect(`/u2/${page}?state=${encodeURIComponent(t.state)}`, 302);
  }
  const [loginSession, user] = await Promise.all([
    readLoginSession(c, t.loginSession.id),
    tenantObject(c.env, c.var.tenant.id).users().get(heldUser),
  ]);
  if (loginSession?.state === "awaiting_mfa") {
    // The second factor was verified: the MFA step completes the login in the chosen organization.
    const passed = await passedMfaFor(c, loginSession);
    return passed ? c.redirect(mfaEntry(c, passed.id), 302) : sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
  }
  if (loginSession?.state !== "pending") return sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
  if (!user || user.blocked) return sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
  const response = await finishLogin(c, loginSession, t.client, user);
  return response ?? sendMessage(c, t.shell, EXPIRED_LOGIN, 400);
}

/**
 * GET /u2/invitation?invitation=<ticket>&organization=<id>: Gatehouse's own landing for invitation links
 * when neither the application nor the tenant has a login route. It starts the authorization request the
 * application would have made, ending on the test-login page (/u2/info) of this tenant.
 */
export async function invitationLanding(c: AppContext): Promise<Response> {
  const config = await configOf(c);
  const ticket = c.req.query("invitation") ?? c.req.query("ticket") ?? "";
  const organization = c.req.query("organization") ?? "";
  const peeked = ticket && organization ? await tenantObject(c.env, c.var.tenant.id).organizations().peekInvitation(ticket, organization) : null;
  if (!peeked?.ok) return invitationProblem(c, config, peeked?.reason ?? "unknown");
  const client = clientIn(config, peeked.invitation.client_id);
  if (!client) return invitationProblem(c, config, "unknown");
  const origin = new URL(c.var.tenant.issuer).origin;
  const query = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: `${origin}/u2/info?client_id=${encodeURIComponent(client.client_id)}`,
    response_type: "code",
    scope: "openid profile email",
    invitation: ticket,
    organization: peeked.invitation.organization_id,
  });
  return c.redirect(`/authorize?${query}`, 302);
}
