import { OAuthError } from "../../shared/errors";
import type { AuthorizeRequest, LoginOrganization, LoginSession, TenantConfig } from "../../shared/types";
import type { Branding } from "../../shared/schemas/branding";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { UserRecord } from "../../shared/schemas/users";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { RedirectableError } from "../oauth/authorize/request";
import { refuseToClient } from "../oauth/authorize/respond";
import { tenantObject } from "../tenant/stubs";
import { storeLoginSession } from "../tenant/login-state";
import { configOf } from "./connection";
import { sendMessage, shellFor } from "./render";
import { themeUnder } from "./theme/theme-css";

/**
 * Organization login (issue 11 point 5, SPEC §4.1): the hooks the authorization flow calls, kept here so
 * the flow itself stays organization-agnostic.
 * - `startOrganization` (at /authorize): checks the client's `organization_usage`, resolves `organization`
 *   (id or name) and an `invitation`, and says which page comes first.
 * - `organizationGate` (before any code or token is issued): the membership rule, invitation acceptance and
 *   the post-login organization prompt.
 * - `organizationShell` (login pages): the organization's branding over the tenant's.
 */

type Usage = "deny" | "allow" | "require";
type RequireBehavior = "no_prompt" | "pre_login_prompt" | "post_login_prompt";

/** The client's organization settings; the reference platform's defaults are `deny` and `no_prompt`. */
export function organizationSettings(client: ClientRecord): { usage: Usage; behavior: RequireBehavior } {
  const usage = client.extra.organization_usage;
  const behavior = client.extra.organization_require_behavior;
  return {
    usage: usage === "allow" || usage === "require" ? usage : "deny",
    behavior: behavior === "pre_login_prompt" || behavior === "post_login_prompt" ? behavior : "no_prompt",
  };
}

const redirectError = (request: AuthorizeRequest, code: ConstructorParameters<typeof OAuthError>[0], description: string) =>
  new RedirectableError(new OAuthError(code, description), request.redirect_uri, request.response_mode, request.state);

/** What /authorize does next for an organization (or none). */
export interface OrganizationStart {
  request: AuthorizeRequest;
  /** The first page of the interactive login. */
  page: "login" | "signup" | "organization" | null;
  /** Whether a live session may answer at once (false: the user must go through the pages). */
  allowsSso: boolean;
}

/** The copy of an invitation problem shown to the person who followed the link. */
const INVITATION_PAGES = {
  unknown: { code: "INVITATION_INVALID", title: "Invitation not found", message: "This invitation is invalid, was revoked or has already been accepted." },
  expired: { code: "INVITATION_EXPIRED", title: "Invitation expired", message: "This invitation has expired. Ask the person who invited you to send a new one." },
  email_mismatch: {
    code: "INVITATION_EMAIL_MISMATCH",
    title: "Invitation for another account",
    message: "This invitation was sent to a different email address. Log in or sign up with the address that received it.",
  },
} as const;

/** The clear page of an invitation that cannot be used (issue 11: "expired invitation refused with a clear page"). */
export const invitationProblem = (c: AppContext, config: TenantConfig, reason: keyof typeof INVITATION_PAGES) =>
  sendMessage(c, shellFor(c, config), INVITATION_PAGES[reason], reason === "expired" ? 410 : 400);

/**
 * /authorize's organization step. Refusals the client must hear are thrown as redirectable errors; an
 * unusable invitation is answered with a page, since the person holding it, not the application, acts.
 */
export async function startOrganization(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  config: TenantConfig,
): Promise<OrganizationStart | Response> {
  const { usage, behavior } = organizationSettings(client);
  const { organization: named, invitation, ...rest } = request;
  if (!named) {
    if (invitation) throw redirectError(request, "invalid_request", "parameter organization is required with invitation");
    if (usage !== "require") return { request: rest, page: null, allowsSso: true };
    if (behavior === "no_prompt") throw redirectError(request, "invalid_request", "parameter organization is required for this client");
    // The prompt chooses the organization; a live session cannot answer before it is chosen.
    return { request: rest, page: behavior === "pre_login_prompt" ? "organization" : "login", allowsSso: false };
  }
  if (usage === "deny") throw redirectError(request, "invalid_request", "parameter organization is not allowed for this client");
  const org = await tenantObject(c.env, c.var.tenant.id).organizations().forLogin(named);
  if (!org) throw redirectError(request, "invalid_request", `no organization found by that id or name: ${named}`);
  const resolved: AuthorizeRequest = { ...rest, organization: org.id, organization_name: org.name };
  if (!invitation) return { request: resolved, page: null, allowsSso: true };
  const peeked = await tenantObject(c.env, c.var.tenant.id).organizations().peekInvitation(invitation, org.id);
  if (!peeked.ok) return invitationProblem(c, config, peeked.reason);
  // The invitee's address is fixed on the pages; an existing account logs in, anyone else signs up.
  const { invitee_email, has_account } = peeked.invitation;
  return { request: { ...resolved, invitation, login_hint: invitee_email }, page: has_account ? "login" : "signup", allowsSso: false };
}

/** The address an invitation fixes on the login and sign-up pages, if this login accepts one. */
export const invitedEmail = (request: AuthorizeRequest): string | undefined => (request.invitation ? request.login_hint : undefined);

/** Whether a login must still choose its organization after authenticating (the post-login prompt). */
export const choosesOrganizationAfterLogin = (request: AuthorizeRequest, client: ClientRecord) =>
  !request.organization && organizationSettings(client).usage === "require";

/** Copy of the gate's refusals, sent to the client as `access_denied`. */
function refusal(reason: string, user: UserRecord, orgId: string): string {
  if (reason === "not_member") return `user ${user.user_id} is not part of the ${orgId} organization`;
  if (reason === "connection_not_enabled") return `the connection ${user.connection} is not enabled for the ${orgId} organization`;
  return `the ${orgId} organization no longer exists`;
}

/**
 * The last step before a login in an organization issues anything: the membership rule (with invitation
 * acceptance) in one commit. Returns null to go on, or the response to send instead: the refusal to the
 * client (an OAuth error, or a SAML RequestDenied status for a SAML login), an invitation page, or the
 * organization prompt (post-login) when none is chosen yet.
 */
export async function organizationGate(
  c: AppContext,
  request: AuthorizeRequest,
  client: ClientRecord,
  user: UserRecord,
  loginSession: Pick<LoginSession, "id" | "request" | "csrf_token" | "expires_at"> | null,
): Promise<Response | null> {
  const loginSessionId = loginSession?.id ?? null;
  // Opened only when used: opening the facade is a round trip into the object by itself (issue 31).
  const orgs = () =>
    tenantObject(c.env, c.var.tenant.id).organizations(auditContext(c, { actor: { type: "user", id: user.user_id, email: user.email, client_id: client.client_id } }));
  if (!request.organization) {
    if (!choosesOrganizationAfterLogin(request, client)) return null;
    // Only the post-login prompt gets here without an organization: the user chooses one next.
    // A sealed login session (issue 31) is stored first: the prompt's step changes it.
    if (loginSession) await storeLoginSession(c, loginSession);
    if (loginSessionId && (await orgs().holdForChoice(loginSessionId, user.user_id))) {
      return c.redirect(`/u2/organization?state=${encodeURIComponent(loginSessionId)}`, 302);
    }
    return refuseToClient(c, request, client, "invalid_request", "parameter organization is required for this client");
  }
  const outcome = await orgs().admitLogin({
    organization_id: request.organization,
    user_id: user.user_id,
    email: user.email,
    connection: user.connection,
    ...(request.invitation ? { ticket: request.invitation } : {}),
  });
  if (outcome.ok) return null;
  if (outcome.reason === "unknown" || outcome.reason === "expired" || outcome.reason === "email_mismatch") {
    return invitationProblem(c, await configOf(c), outcome.reason);
  }
  return refuseToClient(c, request, client, "access_denied", refusal(outcome.reason, user, request.organization));
}

/** The organization of a pending login (its connections and branding), or null. */
export async function loginOrganization(c: AppContext, request: AuthorizeRequest): Promise<LoginOrganization | null> {
  if (!request.organization) return null;
  return tenantObject(c.env, c.var.tenant.id).organizations().forLogin(request.organization);
}

/** The tenant's configuration with the organization's branding over the tenant's (issue 11 point 5). */
export function brandedFor(config: TenantConfig, organization: LoginOrganization | null): TenantConfig {
  const branding = organization?.branding;
  if (!branding) return config;
  const merged: Branding = {
    ...config.branding,
    ...(branding.logo_url ? { logo_url: branding.logo_url } : {}),
    colors: { ...config.branding.colors, ...branding.colors },
  };
  const theme = config.brandingTheme ? themeUnder(config.brandingTheme, branding) : config.brandingTheme;
  return { ...config, branding: merged, brandingTheme: theme };
}

/**
 * Whether a login in this organization may use the connection (by name), and whether its users may sign
 * up there: the connection must be enabled for the organization; sign-up needs `is_signup_enabled`, except
 * when accepting an invitation.
 */
export function organizationConnection(organization: LoginOrganization | null, connectionName: string, request: AuthorizeRequest) {
  if (!organization) return { enabled: true, signup: true };
  const link = organization.connections.find((c) => c.name === connectionName);
  return { enabled: Boolean(link), signup: Boolean(link && (link.is_signup_enabled || request.invitation)) };
}

/** What the login and sign-up pages show of the organization: its name, and the invitation's fixed email. */
export function organizationProps(t: { organization: LoginOrganization | null; loginSession: { request: AuthorizeRequest } }) {
  const name = t.organization ? (t.organization.display_name ?? t.organization.name) : undefined;
  return { ...(name ? { organizationName: name } : {}), ...(invitedEmail(t.loginSession.request) ? { isEmailLocked: true } : {}) };
}
